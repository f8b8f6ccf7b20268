//! The node protocol against the real node program in a scratch directory
//! (`KDEPLOY_PREFIX`, through `LocalHost`): a command line of another
//! protocol version is refused with the typed `version` refusal, and a node
//! that lacks a tool the program needs gets no program — installing it
//! fails with `unsupported` naming the tool.

use std::path::Path;

use kdeploy::node::protocol::{refusal, Code, Failure, VERSION};
use kdeploy::node::script::{install_command, script_path};
use kdeploy::node::{Node, NodeError};
use kdeploy::transport::{shell_quote, Host, LocalHost};

use crate::support::node::path_without;

fn refusal_of(status: u32, stderr: &[u8]) -> (Code, String) {
    match refusal::decode(status, stderr) {
        Ok(Failure::Refused { refusals, .. }) => {
            let r = refusals.last().cloned().unwrap();
            (r.code, r.detail)
        }
        other => panic!("{other:?}: {}", String::from_utf8_lossy(stderr)),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn another_protocol_version_is_refused_typed() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().to_str().unwrap().to_string();
    let host = LocalHost::new("local");
    let node = Node::install_with_prefix(&host, &prefix).await.unwrap();
    assert!(node.status().await.is_ok(), "this deployer's version is the program's");
    let path = shell_quote(&script_path(&prefix));
    let env = format!("KDEPLOY_PREFIX={}", shell_quote(&prefix));
    for args in [format!("--protocol {}", VERSION + 1), "--protocol".into(), "status".into(), String::new()] {
        let out = host.exec(&format!("{env} sh {path} {args} status"), None).await.unwrap();
        assert_eq!(refusal_of(out.status, &out.stderr), (Code::Version, VERSION.to_string()), "{args}");
        assert!(out.stdout.is_empty(), "{args}: nothing read, nothing answered");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_without_a_needed_tool_gets_no_program_and_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("node").to_str().unwrap().to_string();
    let host = LocalHost::new("local");
    let bin = path_without(&dir.path().join("bin"), "flock");
    let cmd = format!("PATH={} ; {}", shell_quote(&bin), install_command(&prefix));
    let out = host.exec(&cmd, Some(kdeploy::node::script::SCRIPT.as_bytes())).await.unwrap();
    assert_eq!(refusal_of(out.status, &out.stderr), (Code::Unsupported, "no flock".to_string()));
    let bin_dir = Path::new(&script_path(&prefix)).parent().unwrap().to_path_buf();
    let left: Vec<_> = std::fs::read_dir(&bin_dir).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "nothing installed, nothing left behind: {left:?}");
    // with every tool there, the same install succeeds
    let node = Node::install_with_prefix(&host, &prefix).await;
    assert!(node.is_ok(), "{:?}", node.err());
    assert!(!matches!(node, Err(NodeError::Unsupported { .. })));
}
