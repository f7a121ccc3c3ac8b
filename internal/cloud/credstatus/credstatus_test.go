package credstatus

import (
	"errors"
	"testing"
	"time"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud"
)

func TestBoardNotifiesOnChangeOnly(t *testing.T) {
	b := New()
	ref := Ref{Kind: cloudv1alpha1.ProviderConfigKind, Namespace: "team-a", Name: "aws"}
	events := b.Events(ref.Kind)
	at := time.Unix(1_800_000_000, 0)
	rejected := func(at time.Time) *cloud.CredentialsRejectedError {
		return &cloud.CredentialsRejectedError{Err: errors.New("AuthFailure"), RetryAt: at}
	}
	b.Report(ref, nil) // nothing known, nothing changes
	b.Report(ref, rejected(at))
	b.Report(ref, rejected(at.Add(time.Minute))) // same refusal
	if r, ok := b.Rejected(ref); !ok || r.Message != "AuthFailure" {
		t.Fatalf("Rejected = %+v, %v", r, ok)
	}
	b.Report(ref, nil)
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
	nilBoard.Report(ref, rejected(at))
	if _, ok := nilBoard.Rejected(ref); ok || nilBoard.Events(ref.Kind) != nil {
		t.Fatal("a nil board must ignore reports")
	}
}
