// Package decide holds the AnycastIPBinding controller's pure decisions: a
// node's CVM instance ID, the ownership tags and client token of an
// address, which address belongs to a binding (allocated, adopted or
// blocked by another one), the next cloud step while binding and while
// deleting, the node's taint and annotation changes, the orphan sweep's view
// of an address, and the parsers of flags and labels. Nothing here does I/O,
// so everything is table-tested and the parsers are fuzzed.
package decide
