package status

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// MessageWidth is how much of a message the default table shows (-o wide
// shows all of it).
const MessageWidth = 60

// PrintTable writes rows as kubectl does (tab-aligned, "<none>" for
// nothing) and the summary line. wide adds the full message and the age,
// measured at now.
func PrintTable(w io.Writer, rows []Row, wide bool, now time.Time) error {
	tw := tabwriter.NewWriter(w, 3, 0, 3, ' ', 0)
	cols := []string{"KIND", "NAMESPACE", "NAME", "READY", "REASON", "MESSAGE", "DETAIL"}
	if wide {
		cols = append(cols, "AGE")
	}
	if len(rows) > 0 {
		if _, err := fmt.Fprintln(tw, strings.Join(cols, "\t")); err != nil {
			return fmt.Errorf("writing the table: %w", err)
		}
	}
	for _, r := range rows {
		msg := r.Message
		if !wide {
			msg = shorten(msg, MessageWidth)
		} else {
			msg = strings.Join(strings.Fields(msg), " ")
		}
		cells := []string{r.Kind, none(r.Namespace), r.Name, r.Ready, none(r.Reason), none(msg), none(r.Detail)}
		if wide {
			age := "<unknown>"
			if !r.Created.IsZero() {
				age = duration.HumanDuration(now.Sub(r.Created))
			}
			cells = append(cells, age)
		}
		if _, err := fmt.Fprintln(tw, strings.Join(cells, "\t")); err != nil {
			return fmt.Errorf("writing the table: %w", err)
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the table: %w", err)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "No edgeplane objects found.")
		return err
	}
	_, err := fmt.Fprintln(w, Summary(rows))
	return err
}

func none(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
