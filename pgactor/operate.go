package pgactor

import "context"

// The operator's methods on an Actor: the Admin's, for the actor's own
// tasks.

// Task returns the actor's task with the given ID, live or a dead letter.
// It fails with ErrNoTask when the actor has none with that ID.
func (a *Actor[T]) Task(ctx context.Context, id uint64) (TaskInfo, error) {
	return readTask(ctx, a.store, id, a.name, a.readErr)
}

// Tasks returns a page of the actor's tasks that f selects, as
// Admin.Tasks does; f.Actor is set to the actor's name.
func (a *Actor[T]) Tasks(ctx context.Context, f TaskFilter) (TaskPage, error) {
	f.Actor = a.name
	return readTasks(ctx, a.store, f, a.readErr)
}

// RunNow makes the actor's waiting tasks among ids due now, and returns
// their IDs, in order, as Admin.RunNow does. A running task, a dead
// letter, another actor's task and an unknown ID are left out.
func (a *Actor[T]) RunNow(ctx context.Context, ids ...uint64) ([]uint64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	moved, err := a.store.runNow(ctx, ids)
	if err != nil {
		return nil, a.readErr("run now", err)
	}
	if len(moved) > 0 && a.handler != nil {
		a.poke()
	}
	return moved, nil
}

// Delete deletes the actor's waiting tasks and dead letters among ids, and
// returns their IDs, in order, as Admin.Delete does. A running task is not
// deleted: Cancel it instead.
func (a *Actor[T]) Delete(ctx context.Context, ids ...uint64) ([]uint64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	deleted, err := a.store.deleteTasks(ctx, ids)
	if err != nil {
		return nil, a.readErr("delete", err)
	}
	return deleted, nil
}

// Pause pauses the actor in every process running it, as Admin.Pause
// does: none takes its tasks until Resume.
func (a *Actor[T]) Pause(ctx context.Context) error {
	return pause(ctx, a.store, a.readErr)
}

// Resume resumes the actor in every process running it, as Admin.Resume
// does.
func (a *Actor[T]) Resume(ctx context.Context) error {
	if err := resume(ctx, a.store, a.readErr); err != nil {
		return err
	}
	if a.handler != nil {
		// This process's pump, without waiting for the notification, or
		// without a listener at all.
		a.poke()
	}
	return nil
}
