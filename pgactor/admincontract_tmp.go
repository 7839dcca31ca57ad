package pgactor

// TEMPORARY (helper D, branch i21-console): the types of the operator API's
// contract (/work/notes/admin-api.md), copied so that the console compiles
// before helper A's branch i21-data lands. This file is deleted when
// i21-data is merged; A's pgactor.Admin is the real thing.

import (
	"errors"
	"time"
)

type TaskState string

const (
	TaskQueued    TaskState = "queued"
	TaskScheduled TaskState = "scheduled"
	TaskRetrying  TaskState = "retrying"
	TaskRunning   TaskState = "running"
	TaskCanceling TaskState = "canceling"
	TaskDead      TaskState = "dead"
)

type TaskInfo struct {
	ID        uint64
	Actor     string
	Type      string
	State     TaskState
	Payload   []byte
	Priority  int16
	Key       string
	Enqueued  time.Time
	RunAt     time.Time
	Started   time.Time
	Attempt   int
	Runs      int
	Lost      int
	Owner     string
	LastError string
	Reason    string
	DeadAt    time.Time
}

type TaskFilter struct {
	Actor  string
	States []TaskState
	Key    string
	Since  time.Time
	Until  time.Time
	After  uint64
	Limit  int
}

type TaskPage struct {
	Tasks []TaskInfo
	Next  uint64
}

type ActorInfo struct {
	Name     string
	Paused   bool
	PausedAt time.Time
	Stats    Stats
}

var (
	ErrNoTask  = errors.New("pgactor: no such task")
	ErrNoActor = errors.New("pgactor: no such actor")
)
