package main

// Requests counted on the API server's side: its audit log (metadata only,
// only the reactors' users), grouped by verb and resource.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"
)

const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: ["%s", "%s", "%s"]
- level: None
`

type auditEntry struct {
	AuditID   string    `json:"auditID"`
	Verb      string    `json:"verb"`
	Stage     string    `json:"stage"`
	Received  time.Time `json:"requestReceivedTimestamp"`
	UserAgent string    `json:"userAgent"`
	User      struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

type Request struct {
	User      string
	Verb      string // get, list, watch, create, patch, update, delete
	Resource  string // e.g. deployments, gpuworkloads/status
	Received  time.Time
	Name      string // the object's name, when the request names one
	UserAgent string // tells replicas apart: the operator puts its identity there
	Code      int    // the answer's status; 0 for a watch still open when the log was read
}

func readAudit(path string) ([]Request, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	seen := map[string]int{} // audit ID -> index in requests
	var requests []Request
	// Only the last line may be unreadable (still being written): any
	// other would make the counts low without a word.
	unreadable := 0
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for line := 1; scanner.Scan(); line++ {
		if unreadable > 0 {
			return nil, fmt.Errorf("%s: line %d is not an audit event", path, unreadable)
		}
		var entry auditEntry
		if json.Unmarshal(scanner.Bytes(), &entry) != nil {
			unreadable = line
			continue
		}
		resource := entry.ObjectRef.Resource
		if entry.ObjectRef.Subresource != "" {
			resource += "/" + entry.ObjectRef.Subresource
		}
		if index, ok := seen[entry.AuditID]; ok {
			// A watch logs ResponseStarted and ResponseComplete: one request.
			if entry.Stage == "ResponseComplete" {
				requests[index].Code = entry.ResponseStatus.Code
			}
			continue
		}
		seen[entry.AuditID] = len(requests)
		requests = append(requests, Request{entry.User.Username, entry.Verb, resource, entry.Received,
			entry.ObjectRef.Name, entry.UserAgent, entry.ResponseStatus.Code})
	}
	return requests, scanner.Err()
}

// RequestCounts maps "verb resource" to a count; Total is their sum and
// Writes the creates, patches, updates and deletes among them.
type RequestCounts struct {
	ByVerb map[string]int `json:"byVerbAndResource"`
	Total  int            `json:"total"`
	Reads  int            `json:"reads"`  // get and list
	Writes int            `json:"writes"` // create, patch, update, delete
}

func countRequests(requests []Request, user string, from, to time.Time) RequestCounts {
	counts := RequestCounts{ByVerb: map[string]int{}}
	for _, r := range requests {
		if r.User != user || r.Received.Before(from) || r.Received.After(to) {
			continue
		}
		counts.ByVerb[r.Verb+" "+r.Resource]++
		counts.Total++
		switch r.Verb {
		case "get", "list":
			counts.Reads++
		case "create", "patch", "update", "delete", "deletecollection":
			counts.Writes++
		}
	}
	return counts
}

func (c RequestCounts) keys() []string {
	var keys []string
	for key := range c.ByVerb {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}
