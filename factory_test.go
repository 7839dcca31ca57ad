package actorpool

import (
	"context"
	"errors"
	"testing"
)

func TestFactoryFuncs(t *testing.T) {
	var destroyed []int
	f := FactoryFuncs[int]{
		CreateFunc:  func(context.Context) (int, error) { return 7, nil },
		DestroyFunc: func(v int) { destroyed = append(destroyed, v) },
	}
	if v, err := f.Create(context.Background()); v != 7 || err != nil {
		t.Errorf("Create = %v, %v", v, err)
	}
	if f.Validate(7) != nil || f.Test(context.Background(), 7) != nil {
		t.Error("nil ValidateFunc or TestFunc reported an error")
	}
	f.Destroy(7)
	if len(destroyed) != 1 {
		t.Error("DestroyFunc not called")
	}
	if hasValidate[int](f) || hasTest[int](f) {
		t.Error("a FactoryFuncs without ValidateFunc/TestFunc claims to have them")
	}
	boom := errors.New("boom")
	f.ValidateFunc = func(int) error { return boom }
	f.TestFunc = func(context.Context, int) error { return boom }
	if !errors.Is(f.Validate(1), boom) || !errors.Is(f.Test(context.Background(), 1), boom) {
		t.Error("ValidateFunc/TestFunc not called")
	}
	if !hasValidate[int](&f) || !hasTest[int](&f) {
		t.Error("hasValidate/hasTest missed the funcs")
	}
}
