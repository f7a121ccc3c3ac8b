package credstatus

import (
	"errors"
	"testing"
	"time"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
)

func TestBoardNotifiesOnChangeOnly(t *testing.T) {
	b := New()
	ref := Ref{Kind: cloudv1alpha1.ProviderConfigKind, Namespace: "team-a", Name: "aws"}
	events := b.Events(ref.Kind)
	at := time.Unix(1_800_000_000, 0)
	b.Report(ref, nil, time.Time{}) // nothing known, nothing changes
	b.Report(ref, errors.New("AuthFailure"), at)
	b.Report(ref, errors.New("AuthFailure"), at.Add(time.Minute)) // same refusal
	if r, ok := b.Rejected(ref); !ok || r.Message != "AuthFailure" {
		t.Fatalf("Rejected = %+v, %v", r, ok)
	}
	b.Report(ref, nil, time.Time{})
	if _, ok := b.Rejected(ref); ok {
		t.Fatal("still rejected after a clear")
	}
	if n := len(events); n != 2 {
		t.Fatalf("%d notifications, want 2 (rejected, cleared)", n)
	}
	if e := <-events; e.Object.GetNamespace() != "team-a" || e.Object.GetName() != "aws" {
		t.Fatalf("notification for %s/%s", e.Object.GetNamespace(), e.Object.GetName())
	}
	var nilBoard *Board
	nilBoard.Report(ref, errors.New("x"), at)
	if _, ok := nilBoard.Rejected(ref); ok || nilBoard.Events(ref.Kind) != nil {
		t.Fatal("a nil board must ignore reports")
	}
}
