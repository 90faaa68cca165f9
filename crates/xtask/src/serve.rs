//! `cargo xtask serve`: a static file server for the built page, target/site/ (the page needs HTTP: ES modules and
//! `WebAssembly.instantiateStreaming` refuse `file://`, and the latter needs `application/wasm`).
//!
//! One thread per connection, HTTP/1.1 keep-alive, request heads parsed by `httparse`. A browser
//! opens about six connections at once and keeps them alive; a fixed pool of workers (which
//! tiny_http used) left some of them unserved on a fresh server, and the page never loaded.

use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};

/// How long an idle keep-alive connection stays open.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// The most bytes of request head we read (a browser's are a few hundred).
const MAX_HEAD: usize = 64 * 1024;

/// Arguments of `cargo xtask serve`.
#[derive(clap::Args)]
pub struct Args {
    /// Port to listen on.
    #[arg(long, default_value_t = 8000)]
    port: u16,
    /// Address to listen on (use 0.0.0.0 to reach it from another machine).
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Serve target/site/ as it is, without building the page first.
    #[arg(long)]
    no_build: bool,
    /// Build the wasm with the dev profile (see `build-web --dev`).
    #[arg(long, conflicts_with = "no_build")]
    dev: bool,
}

/// Builds the page (unless `--no-build`) and serves target/site/ until interrupted.
pub fn run(args: &Args) -> Result<()> {
    if !args.no_build {
        crate::web::run(&crate::web::Args { dev: args.dev })?;
    }
    let site = crate::bundle::site_dir();
    if !site.join("pkg").exists() {
        bail!(
            "{} has no built page: run `cargo xtask build-web` (or serve without --no-build)",
            crate::rel(&site).display()
        );
    }
    let www = site.canonicalize().with_context(|| format!("{} is missing", site.display()))?;

    // Bind ourselves so "port taken" gets a clear message rather than tiny_http's boxed error.
    let listener = TcpListener::bind((args.host.as_str(), args.port)).map_err(|err| {
        if err.kind() == ErrorKind::AddrInUse {
            anyhow::anyhow!(
                "port {} on {} is already in use (another `cargo xtask serve`?): \
                 stop that server or pick another port with --port",
                args.port,
                args.host
            )
        } else {
            anyhow::Error::new(err).context(format!("cannot listen on {}:{}", args.host, args.port))
        }
    })?;
    let addr = listener.local_addr()?;
    println!("serving {} at http://{addr}/ (Ctrl-C to stop)", crate::rel(&www).display());
    std::thread::scope(|scope| {
        for stream in listener.incoming() {
            match stream {
                Ok(stream) => {
                    let www = &www;
                    // A client that goes away mid-request is not an error of ours.
                    scope.spawn(move || serve_connection(www, stream).ok());
                }
                Err(err) => eprintln!("accept failed: {err}"),
            }
        }
    });
    bail!("the HTTP server stopped unexpectedly")
}

/// One response.
struct Reply {
    status: u16,
    reason: &'static str,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
}

/// Answers the requests of one connection until the client closes it or goes idle.
fn serve_connection(www: &Path, stream: TcpStream) -> std::io::Result<()> {
    // Small responses would otherwise wait ~40 ms for the client's delayed ACK (Nagle).
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(IDLE_TIMEOUT))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    loop {
        let Some(raw) = read_head(&mut reader)? else { return Ok(()) };
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut request = httparse::Request::new(&mut headers);
        let parsed = request.parse(&raw);
        let (method, url) = (request.method.unwrap_or(""), request.path.unwrap_or(""));
        let header = |name: &str| {
            request.headers.iter().find(|h| h.name.eq_ignore_ascii_case(name)).map(|h| h.value.to_ascii_lowercase())
        };
        let gzip = header("accept-encoding").is_some_and(|v| accepts_gzip(&v));
        let reply = match parsed {
            Ok(httparse::Status::Complete(_)) => answer(www, method, url, gzip),
            _ => text(400, "Bad Request", "400 Bad Request\n"),
        };
        // HTTP/1.1 keeps the connection unless told otherwise. A request with a body (never
        // sent by the page; refused below) closes it, since its body is not read.
        let has_body = header("content-length").is_some_and(|v| v != b"0") || header("transfer-encoding").is_some();
        let keep_alive = request.version == Some(1)
            && parsed.is_ok()
            && !has_body
            && !header("connection").is_some_and(|v| v.windows(5).any(|w| w == b"close"));
        println!("{} {method} {url}", reply.status);
        let mut head =
            format!("HTTP/1.1 {} {}\r\nContent-Length: {}\r\n", reply.status, reply.reason, reply.body.len());
        for (name, value) in &reply.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str(if keep_alive { "Connection: keep-alive\r\n\r\n" } else { "Connection: close\r\n\r\n" });
        writer.write_all(head.as_bytes())?;
        if method != "HEAD" {
            writer.write_all(&reply.body)?;
        }
        writer.flush()?;
        if !keep_alive {
            return Ok(());
        }
    }
}

/// Reads one request head (through the blank line); `None` when the client closed or idled out.
fn read_head(reader: &mut impl BufRead) -> std::io::Result<Option<Vec<u8>>> {
    let mut raw = Vec::new();
    loop {
        let before = raw.len();
        match reader.read_until(b'\n', &mut raw) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => return Ok(None),
            Err(e) => return Err(e),
        }
        let line = &raw[before..];
        if line == b"\r\n" || line == b"\n" {
            if before == 0 {
                raw.clear(); // stray blank lines between requests are allowed
                continue;
            }
            return Ok(Some(raw));
        }
        if raw.len() > MAX_HEAD {
            return Ok(Some(raw)); // httparse will reject it as incomplete
        }
    }
}

/// What a request resolves to.
#[derive(Debug, PartialEq, Eq)]
enum Resolved {
    File(PathBuf),
    /// A directory asked for without its trailing slash: redirect so relative URLs work.
    Redirect(String),
    NotFound,
    BadRequest,
}

/// Whether an `Accept-Encoding` value (lowercased) takes gzip: `gzip` or `*` listed, without `q=0`.
fn accepts_gzip(value: &[u8]) -> bool {
    let value = String::from_utf8_lossy(value);
    value.split(',').any(|coding| {
        let mut parts = coding.split(';').map(str::trim);
        let name = parts.next().unwrap_or("");
        let refused = parts.any(|p| p.strip_prefix("q=").and_then(|q| q.parse::<f64>().ok()) == Some(0.0));
        matches!(name, "gzip" | "x-gzip" | "*") && !refused
    })
}

/// A file's body as sent: its precompressed twin (`FILE.gz`, from the build) when the client takes
/// gzip and the twin is not older than the file, else the file itself. The flag says which.
fn body_of(path: &Path, gzip: bool) -> std::io::Result<(Vec<u8>, bool)> {
    let twin = crate::compress::twin(path);
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified());
    if gzip && matches!((modified(&twin), modified(path)), (Ok(t), Ok(f)) if t >= f) {
        return Ok((std::fs::read(&twin)?, true));
    }
    Ok((std::fs::read(path)?, false))
}

fn answer(www: &Path, method: &str, url: &str, gzip: bool) -> Reply {
    if !matches!(method, "GET" | "HEAD") {
        let mut reply = text(405, "Method Not Allowed", "405 Method Not Allowed\n");
        reply.headers.push(("Allow", "GET, HEAD".into()));
        return reply;
    }
    match resolve(www, url) {
        Resolved::File(path) => match body_of(&path, gzip) {
            Ok((body, gzipped)) => {
                let mut headers = vec![
                    ("Content-Type", content_type(&path).into()),
                    ("Cache-Control", "no-store".into()),
                    ("X-Content-Type-Options", "nosniff".into()),
                ];
                if crate::compress::compressible(&path) {
                    headers.push(("Vary", "Accept-Encoding".into()));
                }
                if gzipped {
                    headers.push(("Content-Encoding", "gzip".into()));
                }
                Reply { status: 200, reason: "OK", headers, body }
            }
            Err(_) => text(404, "Not Found", &format!("404 Not Found: {url}\n")),
        },
        Resolved::Redirect(location) => {
            let mut reply = text(301, "Moved Permanently", "301 Moved Permanently\n");
            reply.headers.push(("Location", location));
            reply
        }
        Resolved::NotFound => text(404, "Not Found", &format!("404 Not Found: {url}\n")),
        Resolved::BadRequest => text(400, "Bad Request", "400 Bad Request\n"),
    }
}

fn text(status: u16, reason: &'static str, body: &str) -> Reply {
    Reply {
        status,
        reason,
        headers: vec![("Content-Type", "text/plain; charset=utf-8".into()), ("Cache-Control", "no-store".into())],
        body: body.as_bytes().to_vec(),
    }
}

/// Maps a request URL to a file under `www` (canonical), never outside it.
fn resolve(www: &Path, url: &str) -> Resolved {
    let path = url.split(['?', '#']).next().unwrap_or("");
    let Some(decoded) = percent_decode(path) else {
        return Resolved::BadRequest;
    };
    if !decoded.starts_with('/') {
        return Resolved::BadRequest;
    }
    let mut file = www.to_path_buf();
    for segment in decoded.split('/') {
        match segment {
            "" | "." => {}
            ".." => return Resolved::NotFound,
            s if s.contains(['\\', '\0']) => return Resolved::BadRequest,
            s => file.push(s),
        }
    }
    // Canonicalising resolves symlinks too, so a link pointing out of www/ is refused.
    let Ok(file) = file.canonicalize() else {
        return Resolved::NotFound;
    };
    if !file.starts_with(www) {
        return Resolved::NotFound;
    }
    if file.is_dir() {
        if !path.ends_with('/') {
            return Resolved::Redirect(format!("{path}/"));
        }
        let index = file.join("index.html");
        return if index.is_file() { Resolved::File(index) } else { Resolved::NotFound };
    }
    Resolved::File(file)
}

/// Decodes `%XX` escapes; `None` if an escape is malformed or the result is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript",
        "css" => "text/css",
        "wasm" => "application/wasm",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" | "md" => "text/plain; charset=utf-8",
        "ts" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A throwaway www/ with an index, a module, a subfolder and a secret next to it.
    fn site(test: &str) -> (PathBuf, PathBuf) {
        let base = std::env::temp_dir().join(format!("xtask-serve-{test}-{}", std::process::id()));
        let www = base.join("www");
        std::fs::create_dir_all(www.join("pkg")).unwrap();
        std::fs::create_dir_all(www.join("empty")).unwrap();
        std::fs::write(www.join("index.html"), "<!doctype html>").unwrap();
        std::fs::write(www.join("main.js"), "").unwrap();
        std::fs::write(www.join("pkg/a b.wasm"), "").unwrap();
        std::fs::write(base.join("secret.txt"), "no").unwrap();
        (www.canonicalize().unwrap(), base)
    }

    #[test]
    fn resolves_urls_inside_www_only() {
        let (www, base) = site("resolve");
        let file = |p: &str| Resolved::File(www.join(p));
        let cases = [
            ("/", file("index.html")),
            ("/index.html", file("index.html")),
            ("/main.js?v=3", file("main.js")),
            ("/main.js#top", file("main.js")),
            ("//main.js", file("main.js")),
            ("/./main.js", file("main.js")),
            ("/pkg/a%20b.wasm", file("pkg/a b.wasm")),
            ("/pkg", Resolved::Redirect("/pkg/".into())),
            ("/pkg/", Resolved::NotFound),
            ("/empty/", Resolved::NotFound),
            ("/missing.js", Resolved::NotFound),
            ("/../secret.txt", Resolved::NotFound),
            ("/pkg/../../secret.txt", Resolved::NotFound),
            ("/%2e%2e/secret.txt", Resolved::NotFound),
            ("/%2E%2E%2Fsecret.txt", Resolved::NotFound),
            ("/..%5csecret.txt", Resolved::BadRequest),
            ("/%zz", Resolved::BadRequest),
            ("/%", Resolved::BadRequest),
            ("/%ff", Resolved::BadRequest),
            ("main.js", Resolved::BadRequest),
        ];
        for (url, expected) in cases {
            assert_eq!(resolve(&www, url), expected, "url {url}");
        }
        std::fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn gzip_is_sent_only_to_a_client_that_takes_it() {
        for yes in ["gzip", "gzip, deflate, br, zstd", "br;q=1.0, gzip;q=0.8", "*", "x-gzip"] {
            assert!(accepts_gzip(yes.as_bytes()), "{yes}");
        }
        for no in ["", "identity", "br", "gzip;q=0", "gzip; q=0.0", "deflate, gzip;q=0"] {
            assert!(!accepts_gzip(no.as_bytes()), "{no}");
        }
    }

    #[test]
    fn a_file_is_sent_as_its_precompressed_twin_unless_the_twin_is_stale() {
        let (www, base) = site("twin");
        let file = www.join("main.js");
        std::fs::write(crate::compress::twin(&file), b"twin").unwrap();
        assert_eq!(body_of(&file, true).unwrap(), (b"twin".to_vec(), true));
        assert!(!body_of(&file, false).unwrap().1, "a client without gzip gets the file");
        // A file rebuilt after its twin (a dev build writes no twins) is sent as it is.
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&file, b"newer").unwrap();
        assert_eq!(body_of(&file, true).unwrap(), (b"newer".to_vec(), false));
        std::fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn content_types_are_what_browsers_require() {
        let cases = [
            ("index.html", "text/html; charset=utf-8"),
            ("main.js", "text/javascript"),
            ("x.mjs", "text/javascript"),
            ("style.css", "text/css"),
            ("pkg/kneelab_web_bg.wasm", "application/wasm"),
            ("config.json", "application/json"),
            ("logo.svg", "image/svg+xml"),
            ("shot.png", "image/png"),
            ("favicon.ico", "image/x-icon"),
            ("notes.txt", "text/plain; charset=utf-8"),
            ("blob.bin", "application/octet-stream"),
        ];
        for (name, expected) in cases {
            assert_eq!(content_type(Path::new(name)), expected, "{name}");
        }
    }
}
