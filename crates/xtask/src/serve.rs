//! `cargo xtask serve`: a static file server for www/ (the page needs HTTP: ES modules and
//! `WebAssembly.instantiateStreaming` refuse `file://`, and the latter needs `application/wasm`).

use std::fs::File;
use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use tiny_http::{Header, Method, Request, Response, ResponseBox, Server};

use crate::repo_root;

/// Threads answering requests, so a page's parallel fetches (modules, wasm) don't queue.
const WORKERS: usize = 4;

/// Arguments of `cargo xtask serve`.
#[derive(clap::Args)]
pub struct Args {
    /// Port to listen on.
    #[arg(long, default_value_t = 8000)]
    port: u16,
    /// Address to listen on (use 0.0.0.0 to reach it from another machine).
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Serve www/ as it is, without building the wasm first.
    #[arg(long)]
    no_build: bool,
    /// Build the wasm with the dev profile (see `build-web --dev`).
    #[arg(long, conflicts_with = "no_build")]
    dev: bool,
}

/// Builds the page (unless `--no-build`) and serves www/ until interrupted.
pub fn run(args: &Args) -> Result<()> {
    if !args.no_build {
        crate::web::run(&crate::web::Args { dev: args.dev })?;
    }
    let www = repo_root().join("www");
    let www = www.canonicalize().with_context(|| format!("{} is missing", www.display()))?;
    if !www.join("pkg").exists() {
        println!("note: www/pkg/ is missing; run `cargo xtask build-web` (or serve without --no-build)");
    }

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
    let server =
        Server::from_listener(listener, None).map_err(|err| anyhow::anyhow!("cannot start the HTTP server: {err}"))?;
    println!("serving {} at http://{addr}/ (Ctrl-C to stop)", crate::rel(&www).display());

    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| {
                while let Ok(request) = server.recv() {
                    answer(&www, request);
                }
            });
        }
    });
    bail!("the HTTP server stopped unexpectedly")
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

fn answer(www: &Path, request: Request) {
    let url = request.url().to_owned();
    let method = request.method().clone();
    let (status, response) = if !matches!(method, Method::Get | Method::Head) {
        (405, text(405, "405 Method Not Allowed\n").with_header(header("Allow", "GET, HEAD")))
    } else {
        match resolve(www, &url) {
            Resolved::File(path) => match File::open(&path) {
                Ok(file) => (
                    200,
                    Response::from_file(file)
                        .with_header(header("Content-Type", content_type(&path)))
                        .with_header(header("Cache-Control", "no-store"))
                        .with_header(header("X-Content-Type-Options", "nosniff"))
                        .boxed(),
                ),
                Err(_) => (404, text(404, &format!("404 Not Found: {url}\n"))),
            },
            Resolved::Redirect(location) => {
                (301, text(301, "301 Moved Permanently\n").with_header(header("Location", &location)))
            }
            Resolved::NotFound => (404, text(404, &format!("404 Not Found: {url}\n"))),
            Resolved::BadRequest => (400, text(400, "400 Bad Request\n")),
        }
    };
    println!("{status} {method} {url}");
    // The client may have gone away (page reload); nothing to do about that.
    let _ = request.respond(response);
}

fn text(status: u16, body: &str) -> ResponseBox {
    Response::from_string(body)
        .with_status_code(status)
        .with_header(header("Content-Type", "text/plain; charset=utf-8"))
        .with_header(header("Cache-Control", "no-store"))
        .boxed()
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("header names and values are ASCII")
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
    fn site() -> (PathBuf, PathBuf) {
        let base = std::env::temp_dir().join(format!("xtask-serve-test-{}", std::process::id()));
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
        let (www, base) = site();
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
