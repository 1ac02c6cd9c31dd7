package harness

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"time"
)

// Requests counts the target's API requests, from the audit log.
type Requests struct {
	// ByVerb: get, list, watch, create, update, patch, delete.
	ByVerb map[string]int `json:"byVerb"`
	// ByResource: "<verb> <resource>[/<subresource>]".
	ByResource map[string]int `json:"byResource"`
}

// Writes is the number of mutating requests.
func (r Requests) Writes() int {
	n := 0
	for _, v := range []string{"create", "update", "patch", "delete", "deletecollection"} {
		n += r.ByVerb[v]
	}
	return n
}

// QueueStatusWrites is the number of writes of ClusterQueue, LocalQueue
// and Cohort status: they follow the queues and the time (each queue's
// counts at most once a second), not the workloads.
func (r Requests) QueueStatusWrites() int {
	return r.writesOf("clusterqueues/status", "localqueues/status", "cohorts/status")
}

// WorkloadWrites is the number of writes of Workloads (object and
// status) and of events: what a system writes per workload, apart from
// the queues. Events are counted whole: in a run every event is about a
// Workload (it has no jobs and its queues are the harness's).
func (r Requests) WorkloadWrites() int {
	return r.writesOf("workloads", "workloads/status", "events")
}

// writesOf is the number of writes of the resources (with their
// subresource, as "workloads/status").
func (r Requests) writesOf(resources ...string) int {
	n := 0
	for key, c := range r.ByResource {
		verb, resource, _ := strings.Cut(key, " ")
		if isWrite(verb) && slices.Contains(resources, resource) {
			n += c
		}
	}
	return n
}

type auditEvent struct {
	Verb      string `json:"verb"`
	Stage     string `json:"stage"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
}

// countRequests reads the audit log: every target request whose receipt
// falls in [from, to) (zero bounds are open).
func countRequests(path string, from, to time.Time) (Requests, error) {
	r := Requests{ByVerb: map[string]int{}, ByResource: map[string]int{}}
	f, err := os.Open(path)
	if err != nil {
		return r, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev auditEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Stage != "ResponseComplete" {
			continue
		}
		if (!from.IsZero() && ev.RequestReceived.Before(from)) || (!to.IsZero() && !ev.RequestReceived.Before(to)) {
			continue
		}
		r.ByVerb[ev.Verb]++
		if ev.ObjectRef != nil {
			res := ev.ObjectRef.Resource
			if ev.ObjectRef.Subresource != "" {
				res += "/" + ev.ObjectRef.Subresource
			}
			r.ByResource[ev.Verb+" "+res]++
		}
	}
	return r, sc.Err()
}
