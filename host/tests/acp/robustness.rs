//! Many connections at once; malformed and oversized frames.

use agent_client_protocol::v1::schema::StopReason;
use dsh_host::acp::{AcpError, MAX_FRAME_BYTES};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};

use crate::support::{Answer, Model, TestHost, text, within};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_at_once_each_complete_their_turn() {
    let host = TestHost::new(Model::Scripted(json!([text("one"), text("two")])), &[]);
    let (mut a, _sa) = host.connect(Answer::Fail).await;
    let (mut b, _sb) = host.connect(Answer::Fail).await;
    let (sa, sb) = tokio::join!(a.open(&host.project), b.open(&host.project));
    assert_ne!(sa, sb);
    let (ra, rb) = tokio::join!(a.prompt(&sa, "first"), b.prompt(&sb, "second"));
    assert_eq!(ra.unwrap(), StopReason::EndTurn);
    assert_eq!(rb.unwrap(), StopReason::EndTurn);
    let mut texts: Vec<Value> = [a.take_updates(), b.take_updates()]
        .into_iter()
        .map(|updates| {
            assert_eq!(updates.len(), 1, "{updates:#?}");
            updates[0]["content"]["text"].clone()
        })
        .collect();
    texts.sort_by_key(|t| t.to_string());
    assert_eq!(texts, ["one", "two"]);
    a.close().await;
    b.close().await;
}

async fn read_json_line(
    reader: &mut BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
) -> Value {
    let mut line = String::new();
    within("a frame", reader.read_line(&mut line))
        .await
        .unwrap();
    serde_json::from_str(&line).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_line_gets_a_parse_error_and_the_connection_survives() {
    let host = TestHost::new(Model::Scripted(json!([])), &[]);
    let (pipe, _serving) = host.raw();
    let (read, mut write) = tokio::io::split(pipe);
    let mut reader = BufReader::new(read);
    write.write_all(b"this is not json\n").await.unwrap();
    assert_eq!(
        read_json_line(&mut reader).await,
        json!({
            "jsonrpc": "2.0", "id": null,
            "error": {"code": -32700, "message": "Parse error", "data": {"line": "this is not json"}}
        })
    );
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}});
    write
        .write_all(format!("{initialize}\n").as_bytes())
        .await
        .unwrap();
    let answer = read_json_line(&mut reader).await;
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["protocolVersion"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_frame_closes_only_that_connection() {
    let host = TestHost::new(Model::Scripted(json!([text("still here")])), &[]);
    let (mut bystander, _sb) = host.connect(Answer::Fail).await;
    let session = bystander.open(&host.project).await;

    let (pipe, serving) = host.raw();
    let (mut read, mut write) = tokio::io::split(pipe);
    let flood = tokio::spawn(async move {
        let chunk = vec![b'x'; 64 * 1024];
        let mut sent = 0;
        while sent <= MAX_FRAME_BYTES {
            // The server hangs up mid-frame: later writes fail, by design.
            if write.write_all(&chunk).await.is_err() {
                break;
            }
            sent += chunk.len();
        }
    });
    let ended = within("the flooded connection to end", serving)
        .await
        .unwrap();
    assert!(
        matches!(ended, Err(AcpError::FrameTooLarge { limit }) if limit == MAX_FRAME_BYTES),
        "{ended:?}"
    );
    let mut rest = Vec::new();
    within("EOF on the flooded connection", read.read_to_end(&mut rest))
        .await
        .unwrap();
    assert!(rest.is_empty());
    within("the flood to stop", flood).await.unwrap();

    assert_eq!(
        bystander.prompt(&session, "still?").await.unwrap(),
        StopReason::EndTurn
    );
    assert_eq!(bystander.take_updates().len(), 1);
    bystander.close().await;
}
