package pgactor

// Fault points, where tests kill or stop a worker process to check that no
// acknowledged task is lost at the worst moment. faultHook is nil outside
// tests.
const (
	pointFetched = "fetched" // tasks taken, not yet handed to a worker
	pointHandled = "handled" // the handler returned; its outcome is not recorded yet
	pointCommit  = "commit"  // a Tx handler's completion is written, not committed
)

var faultHook func(point string)

func fault(point string) {
	if faultHook != nil {
		faultHook(point)
	}
}
