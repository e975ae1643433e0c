package main

import (
	"strings"
	"testing"
)

func TestWithoutAtomicMapsLeavesTheRestAsItWas(t *testing.T) {
	crd := "status:\n  properties:\n    placement:\n      type: object\n      x-kubernetes-map-type: atomic\n" +
		"    conditions:\n      x-kubernetes-list-type: map\n"
	got := withoutAtomicMaps(crd)
	want := "status:\n  properties:\n    placement:\n      type: object\n" +
		"    conditions:\n      x-kubernetes-list-type: map\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(got, "atomic") {
		t.Error("an atomic marking is left")
	}
}

func TestOwnedStatusFieldsCountsTheStatusEntryOnly(t *testing.T) {
	object := `{"metadata": {"managedFields": [
	  {"manager": "kubectl", "fieldsV1": {"f:spec": {".": {}, "f:model": {}}}},
	  {"manager": "gpu-placement", "subresource": "status", "fieldsV1": {"f:status": {".": {},
	    "f:placement": {},
	    "f:conditions": {".": {}, "k:{\"type\":\"Placed\"}": {".": {}, "f:status": {}, "f:type": {}}}}}}]}}`
	// f:status, f:placement, f:conditions, the Placed key and its two fields.
	if got := ownedStatusFields([]byte(object)); got != 6 {
		t.Errorf("%d fields, want 6", got)
	}
	if got := ownedStatusFields([]byte("not json")); got != 0 {
		t.Errorf("%d fields in no object, want 0", got)
	}
}
