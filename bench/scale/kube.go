package main

// A minimal Kubernetes REST client: enough to create, patch, list and watch
// with the admin's client certificate or a service account's token. The
// harness and the floor share it, so neither pays for a client library the
// other does not use.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

type Credentials struct {
	Server   string `json:"server"`
	CAFile   string `json:"caFile"`
	CertFile string `json:"certFile,omitempty"`
	KeyFile  string `json:"keyFile,omitempty"`
	Token    string `json:"token,omitempty"`
}

type Client struct {
	server string
	token  string
	http   *http.Client
}

func NewClient(creds Credentials) (*Client, error) {
	ca, err := os.ReadFile(creds.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s: no certificate", creds.CAFile)
	}
	config := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if creds.CertFile != "" {
		pair, err := tls.LoadX509KeyPair(creds.CertFile, creds.KeyFile)
		if err != nil {
			return nil, err
		}
		config.Certificates = []tls.Certificate{pair}
	}
	transport := &http.Transport{
		TLSClientConfig:     config,
		ForceAttemptHTTP2:   true, // as client-go does
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
	}
	return &Client{server: creds.Server, token: creds.Token, http: &http.Client{Transport: transport}}, nil
}

type APIError struct {
	Code int
	Body string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.Code, strings.TrimSpace(e.Body))
}

func (c *Client) request(ctx context.Context, method, path, contentType string, body any) (*http.Response, error) {
	var reader io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.server+path, reader)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return c.http.Do(req)
}

// Do sends one request and decodes a JSON answer into out (when not nil).
func (c *Client) Do(method, path, contentType string, body, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := c.request(ctx, method, path, contentType, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return &APIError{Code: resp.StatusCode, Body: string(data)}
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

func (c *Client) Create(path string, body any) error {
	return c.Do(http.MethodPost, path, "application/json", body, nil)
}

const (
	MergePatch     = "application/merge-patch+json"
	StrategicPatch = "application/strategic-merge-patch+json"
)

func (c *Client) Patch(path, patchType string, body any) error {
	return c.Do(http.MethodPatch, path, patchType, body, nil)
}

// Object is the part of any object the harness reads.
type Object struct {
	Metadata struct {
		Name            string `json:"name"`
		Namespace       string `json:"namespace"`
		ResourceVersion string `json:"resourceVersion"`
		Generation      int64  `json:"generation"`
		// Cluster mode: the pod's workload, the GpuWorkload's kind.
		Labels map[string]string `json:"labels,omitempty"`
	} `json:"metadata"`
	Spec   json.RawMessage `json:"spec"`
	Status json.RawMessage `json:"status"`
	Code   int             `json:"code,omitempty"` // a Status's (watch ERROR events)
}

type List struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
		Continue        string `json:"continue"`
	} `json:"metadata"`
	Items []Object `json:"items"`
}

// ListAll pages through a collection; the items and the list's resourceVersion.
func (c *Client) ListAll(path string) ([]Object, string, error) {
	var items []Object
	next := ""
	for {
		var page List
		query := "?limit=500"
		if strings.Contains(path, "?") {
			query = "&limit=500" // a path with a selector
		}
		if next != "" {
			query += "&continue=" + url.QueryEscape(next)
		}
		if err := c.Do(http.MethodGet, path+query, "", nil, &page); err != nil {
			return nil, "", err
		}
		items = append(items, page.Items...)
		if page.Metadata.Continue == "" {
			return items, page.Metadata.ResourceVersion, nil
		}
		next = page.Metadata.Continue
	}
}

type WatchEvent struct {
	Type   string `json:"type"`
	Object Object `json:"object"`
}

// Watch streams events from resourceVersion until ctx ends or the stream
// does; each event is handed to handle with the time it was read.
func (c *Client) Watch(ctx context.Context, path, resourceVersion string, handle func(WatchEvent, time.Time)) error {
	query := "?watch=1&allowWatchBookmarks=true&timeoutSeconds=7200&resourceVersion=" + resourceVersion
	resp, err := c.request(ctx, http.MethodGet, path+query, "", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		return &APIError{Code: resp.StatusCode, Body: string(data)}
	}
	reader := bufio.NewReaderSize(resp.Body, 1<<16)
	decoder := json.NewDecoder(reader)
	for {
		var event WatchEvent
		if err := decoder.Decode(&event); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		handle(event, time.Now())
	}
}

// Follow watches a collection from resourceVersion until ctx ends, and
// never gives up on its own: whenever the stream ends (EOF, the server's
// timeout, an API server restart, a network error) it reopens the watch
// from the last resourceVersion it saw (events and bookmarks), after a
// short backoff while the server does not answer. When that version is too
// old for the server (410 Gone, as after a restart), it lists the
// collection again and hands the items to relist (with the list's time),
// then watches from the list. reopened, when not nil, hears why each watch
// ended. It returns only when ctx ends: like client-go's reflector it
// retries any refusal too, since a restarted server refuses for a moment
// what it will allow (403 before its RBAC cache has filled, 404 before it
// serves the CRDs again).
func (c *Client) Follow(ctx context.Context, path, resourceVersion string, handle func(WatchEvent, time.Time),
	relist func([]Object, time.Time), reopened func(error)) error {
	backoff := 100 * time.Millisecond
	for {
		gone := false
		opened := time.Now()
		err := c.Watch(ctx, path, resourceVersion, func(event WatchEvent, at time.Time) {
			switch event.Type {
			case "ERROR":
				// A Status, not an object: 410 means the version is too
				// old; whatever else it says, listing again is safe.
				gone = true
				return
			case "BOOKMARK":
			default:
				handle(event, at)
			}
			if rv := event.Object.Metadata.ResourceVersion; rv != "" {
				resourceVersion = rv
			}
		})
		if ctx.Err() != nil {
			return nil
		}
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.Code == http.StatusGone {
			gone = true
		}
		if err == nil {
			err = errors.New("the watch ended")
		}
		if gone {
			err = fmt.Errorf("%v (resourceVersion %s too old: listing again)", err, resourceVersion)
		}
		if reopened != nil {
			reopened(err)
		}
		if time.Since(opened) > 5*time.Second {
			backoff = 100 * time.Millisecond // it had worked: no penalty
		}
		for gone && ctx.Err() == nil {
			items, rv, listErr := c.ListAll(path)
			if listErr == nil {
				relist(items, time.Now())
				resourceVersion = rv
				break
			}
			if reopened != nil {
				reopened(fmt.Errorf("listing %s again: %v", path, listErr))
			}
			sleepCtx(ctx, backoff)
			backoff = min(2*backoff, 2*time.Second)
		}
		if !gone {
			sleepCtx(ctx, backoff)
			backoff = min(2*backoff, 2*time.Second)
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// StreamList reads a streaming list (a watch with sendInitialEvents) up to
// the bookmark that ends the initial objects, throwing the bytes away, and
// returns how many lines came before it.
func (c *Client) StreamList(ctx context.Context, path string) (int, error) {
	query := "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=600"
	resp, err := c.request(ctx, http.MethodGet, path+query, "", nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		return 0, &APIError{Code: resp.StatusCode, Body: string(data)}
	}
	reader := bufio.NewReaderSize(resp.Body, 1<<20)
	lines := 0
	for {
		line, err := reader.ReadBytes('\n')
		if err != nil {
			return lines, fmt.Errorf("streaming list of %s ended before its last object: %w", path, err)
		}
		if bytes.Contains(line, []byte(`"BOOKMARK"`)) && bytes.Contains(line, []byte(`k8s.io/initial-events-end`)) {
			return lines, nil
		}
		lines++
	}
}
