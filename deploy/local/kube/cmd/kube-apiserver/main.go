// Command kube-apiserver is a thin wrapper around the upstream kube-apiserver
// command from k8s.io/kubernetes, so it can be built as an ordinary Go module
// (see ../../go.mod for the pinned release and the staging-module replaces).
package main

import (
	"os"
	_ "time/tzdata" // CronJob time zones, as upstream

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
