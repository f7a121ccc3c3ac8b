// Package admissionbody reads an admission request's body before its
// webhook does, in as few reads as the request allows.
//
// Go's HTTP/2 server hands every read of a request body that returns data
// to the connection's one serving goroutine (to credit the flow-control
// windows), and waits until that goroutine takes it. The API server sends
// all its admission requests to a webhook server over one connection, and
// controller-runtime's admission webhook reads the body with io.ReadAll,
// which reads 512 bytes first and then a little more each time: five or six
// reads, so five or six waits for the serving goroutine, for an
// AdmissionReview of a few KiB. With 200 requests in flight that goroutine
// is the queue every handler stands in, several times over (in a
// runtime/trace of the pod webhook benchmark, the slowest handlers waited
// 33 ms on average there). One read of the announced length waits once.
package admissionbody

import (
	"bytes"
	"io"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// MaxBody is the largest body read up front. The buffer is allocated for
// the announced length before any of it arrives, so the bound is far below
// controller-runtime's own limit (7 MiB, which it reaches only as data
// arrives): a client announcing large bodies and sending nothing must not
// cost the manager more than this per request. An AdmissionReview of a pod
// or a node is a few to a few tens of KiB; a larger one reaches the webhook
// unread and is read (or refused) as before.
const MaxBody = 1 << 20

// Buffered returns next with the request body read up front into one
// buffer of the announced Content-Length. A request of unknown or too
// large a length is passed on as it came. A body that ends early or fails
// is passed on as what was read followed by the rest of the original
// (which repeats its end or error).
func Buffered(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength <= 0 || r.ContentLength > MaxBody {
			next.ServeHTTP(w, r)
			return
		}
		buf := make([]byte, r.ContentLength)
		n, err := io.ReadFull(r.Body, buf)
		var rest io.Reader = bytes.NewReader(buf[:n])
		if err != nil {
			rest = io.MultiReader(rest, r.Body)
		}
		r.Body = body{Reader: rest, Closer: r.Body}
		next.ServeHTTP(w, r)
	})
}

// body reads the buffered bytes and closes the original body.
type body struct {
	io.Reader
	io.Closer
}

// Server returns s with every handler registered on it Buffered.
func Server(s webhook.Server) webhook.Server { return bufferedServer{s} }

type bufferedServer struct{ webhook.Server }

func (s bufferedServer) Register(path string, hook http.Handler) {
	s.Server.Register(path, Buffered(hook))
}
