//! The lab tests: kdeploy against real nodes (`lab/lab.sh`: systemd-nspawn
//! machines with sshd, systemd, etcd, containerd and, on the Kubernetes lab,
//! kubeadm, kubelet, the control plane, flannel and CoreDNS). One binary, so
//! it links once; the tests share the lab and take `support::node::lab_lock`
//! before they change it. Without a lab they fail under CI and are skipped
//! otherwise.

#[path = "../support/mod.rs"]
mod support;

mod cache;
mod compress;
mod crash;
mod custom;
mod diff;
mod drift;
mod durability;
mod exec;
mod keeper;
mod kubernetes;
mod login;
mod membership;
mod mirror;
mod node;
mod partial;
mod reset;
mod restore;
mod rollout;
mod secrets;
mod self_rollback;
mod switch;
mod switch_failures;
mod transport;
