// Command etcd is the real etcd server CLI, built from go.etcd.io/etcd/server/v3
// so that the test control plane needs nothing but the Go module proxy.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
