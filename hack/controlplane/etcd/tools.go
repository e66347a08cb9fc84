//go:build tools

// Package etcd pins the etcd server that the end-to-end tests run; hack/install-control-plane.sh builds it.
package etcd

import _ "go.etcd.io/etcd/server/v3"
