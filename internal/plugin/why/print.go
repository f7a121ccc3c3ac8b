package why

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// PrintText writes the verdict for a person: the verdict line, what
// governs the object, the cloud's view and recent Events.
func PrintText(w io.Writer, v Verdict) error {
	var b strings.Builder
	state := "not served"
	if v.Served {
		state = "served"
	}
	fmt.Fprintf(&b, "%s: %s\n", v.Object, state)
	fmt.Fprintf(&b, "  reason:  %s\n", v.Reason)
	fmt.Fprintf(&b, "  message: %s\n", v.Message)
	if len(v.Chain) > 0 {
		b.WriteString("\nGoverned by:\n")
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		for _, l := range v.Chain {
			line := fmt.Sprintf("  %s\t%s\tReady=%s\t%s", l.Ref, l.Role, l.Ready, l.Reason)
			if l.Detail != "" {
				line += "\t" + l.Detail
			}
			_, _ = fmt.Fprintln(tw, line) // a write error surfaces from Flush
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if v.Cloud != "" {
		b.WriteString("\nCloud:\n")
		for _, l := range strings.Split(v.Cloud, "\n") {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	if len(v.Events) > 0 {
		b.WriteString("\nRecent events:\n")
		for _, e := range v.Events {
			fmt.Fprintf(&b, "  %s %s on %s: %s\n", e.Type, e.Reason, e.Object, e.Message)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// PrintJSON writes the verdict as one JSON object.
func PrintJSON(w io.Writer, v Verdict) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
