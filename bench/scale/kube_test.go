package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A fake API server whose watches end: the first after one event and a
// bookmark (EOF), the second with 410 Gone; Follow must reopen from the
// bookmark's version, list again after the 410, and watch from the list.
func TestFollowReopensEndedWatches(t *testing.T) {
	var mu sync.Mutex
	var watchedFrom []string
	lists := 0
	object := func(name, rv string) string {
		return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"bench","resourceVersion":%q},"spec":{}}`, name, rv)
	}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query := r.URL.Query()
		if query.Get("watch") == "" {
			mu.Lock()
			lists++
			mu.Unlock()
			fmt.Fprintf(w, `{"metadata":{"resourceVersion":"20"},"items":[%s,%s,%s]}`,
				object("a", "11"), object("b", "13"), object("c", "15"))
			return
		}
		mu.Lock()
		watchedFrom = append(watchedFrom, query.Get("resourceVersion"))
		n := len(watchedFrom)
		mu.Unlock()
		flusher := w.(http.Flusher)
		switch n {
		case 1:
			fmt.Fprintf(w, `{"type":"ADDED","object":%s}`+"\n", object("a", "11"))
			fmt.Fprintf(w, `{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"12"}}}`+"\n")
		case 2:
			fmt.Fprintf(w, `{"type":"ADDED","object":%s}`+"\n", object("b", "13"))
			fmt.Fprintf(w, `{"type":"ERROR","object":{"kind":"Status","status":"Failure","code":410,"reason":"Expired"}}`+"\n")
		default:
			fmt.Fprintf(w, `{"type":"ADDED","object":%s}`+"\n", object("d", "21"))
			flusher.Flush()
			<-r.Context().Done()
		}
	}))
	defer server.Close()
	client := &Client{server: server.URL, http: server.Client()}

	ctx, cancel := context.WithCancel(context.Background())
	var handled, relisted, reasons []string
	done := make(chan error, 1)
	go func() {
		done <- client.Follow(ctx, "/apis/x/v1/things", "10",
			func(event WatchEvent, _ time.Time) {
				mu.Lock()
				handled = append(handled, event.Object.Metadata.Name)
				mu.Unlock()
				if event.Object.Metadata.Name == "d" {
					cancel()
				}
			},
			func(items []Object, _ time.Time) {
				for _, item := range items {
					relisted = append(relisted, item.Metadata.Name)
				}
			},
			func(err error) { reasons = append(reasons, err.Error()) })
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Follow: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Follow did not get to the third watch")
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(handled, ","); got != "a,b,d" {
		t.Errorf("handled %s, want a,b,d", got)
	}
	if got := strings.Join(relisted, ","); got != "a,b,c" {
		t.Errorf("relisted %s, want a,b,c", got)
	}
	if got := strings.Join(watchedFrom, ","); got != "10,12,20" {
		t.Errorf("watched from %s, want 10,12,20 (the bookmark's version, then the list's)", got)
	}
	if lists != 1 || len(reasons) != 2 || !strings.Contains(reasons[1], "too old") {
		t.Errorf("lists %d, reasons %q: want one list, after the 410", lists, reasons)
	}
}

// A refusal is retried: a restarted server refuses for a moment (403
// before its RBAC cache has filled) what it then allows.
func TestFollowRetriesRefusals(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n <= 2 {
			http.Error(w, `{"kind":"Status","code":403}`, http.StatusForbidden)
			return
		}
		fmt.Fprintf(w, `{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"2"}}}`+"\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer server.Close()
	client := &Client{server: server.URL, http: server.Client()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	refusals := 0
	err := client.Follow(ctx, "/apis/x/v1/things", "1",
		func(event WatchEvent, _ time.Time) { cancel() }, func([]Object, time.Time) {},
		func(err error) {
			if strings.Contains(err.Error(), "403") {
				refusals++
			}
		})
	if err != nil || refusals != 2 {
		t.Fatalf("Follow: %v after %d refusals, want nil after 2", err, refusals)
	}
	if ctx.Err() != context.Canceled {
		t.Fatal("the watch after the refusals was never read")
	}
}
