// Command muster is the Muster manager: it gates jobs that name a queue,
// admits them whole into ClusterQueue quota, and serves the webhooks.
package main

import (
	"flag"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/musterhq/muster/cmd/muster/app"
)

func main() {
	var configFile string
	flag.StringVar(&configFile, "config", "", "Path to the component configuration file (config.muster.dev/v1beta1 Configuration). Empty: all defaults.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("setup")

	cfg, err := app.LoadConfig(configFile)
	if err != nil {
		log.Error(err, "Unable to load the configuration")
		os.Exit(1)
	}
	restConfig, err := ctrl.GetConfig()
	if err != nil {
		log.Error(err, "Unable to find a cluster to talk to")
		os.Exit(1)
	}
	if err := app.Run(ctrl.SetupSignalHandler(), restConfig, cfg); err != nil {
		log.Error(err, "Manager stopped with an error")
		os.Exit(1)
	}
	log.Info("Manager stopped")
}
