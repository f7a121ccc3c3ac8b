// Package scheme builds the runtime scheme edgeplane's programs and tests share.
package scheme

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/edgeplane/edgeplane/apis"
)

// New returns a scheme that knows the Kubernetes built-in kinds and every
// edgeplane kind.
func New() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("adding Kubernetes kinds to the scheme: %w", err)
	}
	if err := apis.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("adding edgeplane kinds to the scheme: %w", err)
	}
	return s, nil
}
