package managedevents

import (
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
)

func TestRecorder(t *testing.T) {
	normal := event.Normal("CreatedExternalResource", "created")
	warning := event.Warning("CannotCreateExternalResource", errString("quota"))
	for name, tc := range map[string]struct {
		warningsOnly bool
		want         []string
	}{
		"everything":    {false, []string{"Normal CreatedExternalResource created", "Warning CannotCreateExternalResource quota"}},
		"warnings only": {true, []string{"Warning CannotCreateExternalResource quota"}},
	} {
		t.Run(name, func(t *testing.T) {
			fake := events.NewFakeRecorder(10)
			r := Recorder{Events: fake, WarningsOnly: tc.warningsOnly}.WithAnnotations("ignored", "too")
			r.Event(&corev1.Pod{}, normal)
			r.Event(&corev1.Pod{}, warning)
			close(fake.Events)
			var got []string
			for e := range fake.Events {
				got = append(got, e)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("recorded %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("event %d = %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }
