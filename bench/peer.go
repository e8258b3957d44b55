package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The peer is what a hand-written script would do to send the big
// campaign: net/http, a few goroutines, requests of 500 users taken in
// order, the response read and its status checked, nothing recorded
// anywhere (no state, no journal, no retries). pushform's send phase is
// measured against it in the same run, against the same sandbox: it is
// the floor a tool that records what it sends should stay close to.

// peerResult is what the peer did.
type peerResult struct {
	targets  int
	requests int
	took     time.Duration // first request sent to last response read
}

// runPeer sends the announcement to users 0..n-1 in requests of batch
// users, with workers goroutines, and returns how long it took.
func runPeer(ctx context.Context, base, key string, n, batch, workers int) (*peerResult, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: workers, MaxConnsPerHost: workers}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	requests := (n + batch - 1) / batch
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			var body bytes.Buffer
			ids := make([]string, 0, batch)
			for failed.Load() == nil && ctx.Err() == nil {
				r := int(next.Add(1) - 1)
				if r >= requests {
					return
				}
				ids = ids[:0]
				for i := r * batch; i < min(n, (r+1)*batch); i++ {
					ids = append(ids, userID(i))
				}
				body.Reset()
				json.NewEncoder(&body).Encode([]peerNotification{{Title: announce.Title, Body: announce.Body, Tag: announce.Tag, UserIDs: ids}})
				if err := peerSend(ctx, client, base, key, body.Bytes()); err != nil {
					err = fmt.Errorf("peer request %d: %w", r+1, err)
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	if err := failed.Load(); err != nil {
		return nil, *err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &peerResult{targets: n, requests: requests, took: took}, nil
}

// peerNotification is the spec's notification object, as much of it as
// the announcement uses.
type peerNotification struct {
	Title   string   `json:"title"`
	Body    string   `json:"body"`
	Tag     string   `json:"tag"`
	UserIDs []string `json:"userIds"`
}

func peerSend(ctx context.Context, client *http.Client, base, key string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/push-notifications/send", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("x-api-key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusMultiStatus {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}
