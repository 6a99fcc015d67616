// Command etcd is a thin wrapper around go.etcd.io/etcd/server/v3/etcdmain so
// the etcd server can be built as an ordinary Go module (the upstream module
// uses relative replace directives, which "go install" rejects).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
