// Package integration holds the CNI IPAM plugin's tests that need a real
// API server (envtest) and, for the network-namespace test, root: the
// suite per CNI spec version, the refusals, the built binary through
// pkg/invoke, and containernetworking's bridge, macvlan and loopback plugins
// driven through libcni. They live apart from package cniipam so that its
// fuzz targets run without starting an API server in every fuzz worker.
package integration
