// Package rbac holds what checks edgeplane's own permissions: the rules a
// least-privilege review asks of every generated and packaged RBAC object
// (Violations), and the scope every admission webhook must keep
// (WebhookViolations). Its tests apply them to config/ and to the rendered
// Helm chart, and run every controller against a real API server as the
// manager's ServiceAccount, holding exactly the chart's RBAC.
package rbac
