// Package rbac holds what checks edgeplane's own permissions: the review a
// least-privilege audit asks of every generated and packaged RBAC object
// (Review and Violations: every privilege-escalation path of Kubernetes'
// RBAC good practices, at the scope each role is bound, with the manager's
// few exemptions), and the scope every admission webhook must keep
// (WebhookViolations). Its tests apply them to config/ and to the rendered
// Helm chart, and run every controller against a real API server as the
// manager's ServiceAccount, holding exactly the chart's RBAC.
package rbac
