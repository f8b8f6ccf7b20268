// Command pause is the lab's sandbox ("pause") container process, written for the
// kdeploy lab: it holds a pod's namespaces open, reaps the zombies it inherits as the
// pod's PID 1, and exits when told to stop. It is what the upstream pause image does,
// built here from this file because no registry can be pulled from in the lab.
// `pause -v` prints its version and exits, as upstream's does: kubeadm's upgrade
// preflight runs it as a Job and waits for it to complete.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println("pause (kdeploy lab) 2")
		return
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s == syscall.SIGCHLD {
			reap()
			continue
		}
		os.Exit(0)
	}
}

// reap collects every child that has exited, without blocking.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
