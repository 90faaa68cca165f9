//! The page as it ships: `www/` (plain ES modules, the sources) bundled and minified by esbuild
//! into `target/site/`, which `cargo xtask serve` serves and `cargo xtask dist` packs.
//!
//! Entry points are the module scripts the HTML pages load plus [`BY_URL`], the modules a host page
//! or a test imports by their URL. Other sources are copied as they are, unused unless something
//! fetches one by URL. esbuild follows every static and literal dynamic import from
//! them, so a module the pages import is bundled with no list to keep; code-splitting keeps each
//! entry at its own path, sharing one copy of what several entries import (so `/js/wasm.js`,
//! imported by a test, is the very module the page's labs use). Lazily imported code becomes a
//! chunk fetched on first use. wasm-bindgen's glue (`pkg/*.js`) is minified but not bundled: it
//! finds its `.wasm` by its own URL, so it stays beside it.
//!
//! Bundled code that finds a file by `import.meta.url` must sit where its source did: such code
//! lives in `js/wasm.js` (`pkgUrl`), whose code lands in `js/` (an entry there, or a chunk, which
//! are all written to `js/`); the build refuses output elsewhere that reads `import.meta.url`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{rel, repo_root};

/// Modules imported by URL, besides the pages' own scripts: the package's (`knee-lab.js`,
/// `wasm.js`) and the browser tests' (`format.js`, `lesson/sweeps.js`).
const BY_URL: &[&str] = &["js/knee-lab.js", "js/fleet-lab.js", "js/wasm.js", "js/format.js", "js/lesson/sweeps.js"];

/// Where bundled entries' shared code and lazy chunks go (relative to the output), at the depth
/// of `js/wasm.js` so the relative URLs it computes from `import.meta.url` hold.
const CHUNKS: &str = "js/[name]-[hash]";

/// The built page, served by `cargo xtask serve`.
pub fn site_dir() -> PathBuf {
    repo_root().join("target").join("site")
}

/// Writes `www/` into [`site_dir`]: the pages' modules bundled and minified, CSS and the wasm
/// glue minified, everything else copied. Without npm (so without esbuild) the sources are copied
/// as they are, with a warning: the page works, heavier. Returns the site and the modules copied
/// unbundled (relative to it).
pub fn build_site(www: &Path, dev: bool) -> Result<(PathBuf, Vec<PathBuf>)> {
    let out = site_dir();
    if out.exists() {
        fs::remove_dir_all(&out).with_context(|| format!("removing {}", out.display()))?;
    }
    fs::create_dir_all(&out)?;
    let Some(esbuild) = crate::node_tool("esbuild")? else {
        println!("warning: esbuild is missing, so the page is served unbundled and unminified (heavier)");
        copy_tree(www, &out, &|_| true)?;
        return Ok((out, Vec::new()));
    };
    let mut entries = BY_URL.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    for page in html_pages(www)? {
        let html = fs::read_to_string(www.join(&page))?;
        for src in module_scripts(&html) {
            if !entries.contains(&src) {
                entries.push(src);
            }
        }
    }
    let meta = meta_path();
    bundle(&esbuild, www, &entries, &out, dev, Some(&meta))?;
    check_relative_urls(&out)?;
    // CSS and the glue: minified one by one (no bundling: the glue must stay beside its wasm).
    let mut minify = Vec::new();
    let mut unbundled = Vec::new();
    let mut files = Vec::new();
    crate::collect_files(www, &mut files)?;
    for file in &files {
        let relative = file.strip_prefix(www).expect("collected under www/");
        let name = relative.to_string_lossy().replace('\\', "/");
        match file.extension().and_then(|e| e.to_str()) {
            Some("css") => minify.push(name),
            Some("js" | "mjs") if name.starts_with("pkg/") && !name.ends_with(".d.ts") => minify.push(name),
            _ if name.ends_with(".d.ts") => {}
            // The rest as it is, but for a module the bundle wrote (an entry). A module the pages
            // fetch by URL rather than import (a worker, say) is still there, unbundled.
            _ => {
                let to = out.join(relative);
                if to.exists() {
                    continue;
                }
                if name.ends_with(".js") || name.ends_with(".mjs") {
                    unbundled.push(relative.to_path_buf());
                }
                fs::create_dir_all(to.parent().expect("a file has a parent"))?;
                if name.ends_with(".html") && !dev {
                    let html = fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
                    fs::write(&to, unindent(&html)).with_context(|| format!("writing {}", to.display()))?;
                } else {
                    fs::copy(file, &to).with_context(|| format!("copying {}", file.display()))?;
                }
            }
        }
    }
    let mut cmd = Command::new(&esbuild);
    cmd.current_dir(www).args(&minify).arg(format!("--outdir={}", out.display())).arg("--outbase=.");
    if !dev {
        cmd.arg("--minify");
    }
    cmd.arg("--log-level=warning");
    crate::run_step("esbuild: minify the CSS and the wasm glue", &mut cmd)?;
    write_preloads(&meta, www, &out, &html_pages(www)?)?;
    Ok((out, unbundled))
}

/// Where [`bundle`] has esbuild describe its output, for [`write_preloads`].
pub fn meta_path() -> PathBuf {
    repo_root().join("target").join("bundle-meta.json")
}

/// Gives each of `pages` (HTML files in `out`, which [`bundle`] wrote with `meta`) the
/// [`preloads`] of its module scripts, in place of any it had.
pub fn write_preloads(meta: &Path, www: &Path, out: &Path, pages: &[String]) -> Result<()> {
    let meta: serde_json::Value = serde_json::from_str(&fs::read_to_string(meta)?)
        .with_context(|| format!("reading esbuild's {}", meta.display()))?;
    for page in pages {
        let path = out.join(page);
        let html = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let links = preloads(&meta, www, out, &module_scripts(&html), page_module(&html));
        fs::write(&path, with_preloads(&html, &links)).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// The first wasm module a page's labs load (js/wasm.js reads the same tag): the one its
/// `<meta name="kneelab-module">` names, if it is one of the two, or the lab's.
fn page_module(html: &str) -> &'static str {
    const TAG: &str = r#"<meta name="kneelab-module" content=""#;
    let named = html.find(TAG).and_then(|at| html[at + TAG.len()..].split('"').next());
    match named {
        Some(name) if name == crate::modules::LESSON_NAME => crate::modules::LESSON_NAME,
        _ => crate::modules::CRATE_NAME,
    }
}

/// The `<link>`s a page's head gives for what it needs at once, so that nothing waits for the
/// module that imports it (a round trip each on a slow link): every chunk its module `scripts`
/// import statically, at any depth, as esbuild's `meta` lists them; and, where those hold
/// js/wasm.js (a lab, which loads the simulator as it connects), the wasm-bindgen glue and the
/// wasm of its first module, `glue`, fetched beside it.
fn preloads(meta: &serde_json::Value, www: &Path, out: &Path, scripts: &[String], glue: &str) -> Vec<String> {
    let outputs = meta["outputs"].as_object().cloned().unwrap_or_default();
    // Output paths are relative to esbuild's directory (www); the page's, to the site.
    let site_path = |key: &str| {
        let mut path = PathBuf::new();
        for part in www.join(key).components() {
            match part {
                std::path::Component::ParentDir => {
                    path.pop();
                }
                part => path.push(part),
            }
        }
        path.strip_prefix(out).ok().map(|p| p.to_string_lossy().replace('\\', "/"))
    };
    let mut todo: Vec<String> = outputs
        .iter()
        .filter(|(_, o)| o["entryPoint"].as_str().is_some_and(|e| scripts.iter().any(|s| s == e)))
        .map(|(key, _)| key.clone())
        .collect();
    let entries = todo.clone();
    let (mut seen, mut links, mut lab) = (Vec::new(), Vec::new(), false);
    while let Some(key) = todo.pop() {
        let Some(output) = outputs.get(&key).filter(|_| !seen.contains(&key)) else { continue };
        lab |= output["inputs"].get("js/wasm.js").is_some();
        if !entries.contains(&key)
            && let Some(href) = site_path(&key)
        {
            links.push(format!(r#"<link rel="modulepreload" href="./{href}">"#));
        }
        for import in output["imports"].as_array().into_iter().flatten() {
            if import["kind"] == "import-statement" && import["external"] != true {
                todo.push(import["path"].as_str().unwrap_or_default().to_string());
            }
        }
        seen.push(key);
    }
    links.sort();
    if lab {
        links.push(format!(r#"<link rel="modulepreload" href="./pkg/{glue}.js">"#));
        links.push(format!(
            r#"<link rel="preload" href="./pkg/{glue}_bg.wasm" as="fetch" type="application/wasm" crossorigin>"#
        ));
    }
    links
}

/// `html` with `links` on their own lines before its first module script, and without the links
/// of this kind it had (a page copied from another build); a page's own preloads of other files
/// stay.
fn with_preloads(html: &str, links: &[String]) -> String {
    const OURS: [&str; 3] = [
        r#"<link rel="modulepreload" href="./js/"#,
        r#"<link rel="modulepreload" href="./pkg/"#,
        r#"<link rel="preload" href="./pkg/"#,
    ];
    let html: String = html
        .split_inclusive('\n')
        .filter(|line| !OURS.iter().any(|ours| line.trim_start().starts_with(ours)))
        .collect();
    match html.find("<script type=\"module\"") {
        Some(at) if !links.is_empty() => {
            let line_start = html[..at].rfind('\n').map_or(0, |i| i + 1);
            let indent = &html[line_start..at];
            let block: String = links.iter().map(|l| format!("{l}\n{indent}")).collect();
            format!("{}{block}{}", &html[..at], &html[at..])
        }
        _ => html,
    }
}

/// Bundles `entries` (paths relative to `www`) into `out`, split and (unless `dev`) minified;
/// esbuild describes what it wrote (each output's imports) in `meta`, if given.
pub fn bundle(
    esbuild: &Path,
    www: &Path,
    entries: &[String],
    out: &Path,
    dev: bool,
    meta: Option<&Path>,
) -> Result<()> {
    let mut cmd = Command::new(esbuild);
    cmd.current_dir(www)
        .args(entries)
        .args(["--bundle", "--splitting", "--format=esm", "--outbase=."])
        .arg(format!("--chunk-names={CHUNKS}"))
        .arg(format!("--outdir={}", out.display()))
        .arg("--log-level=warning");
    if !dev {
        cmd.arg("--minify");
    }
    if let Some(meta) = meta {
        cmd.arg(format!("--metafile={}", meta.display()));
    }
    crate::run_step(&format!("esbuild: bundle {} entries into {}", entries.len(), rel(out).display()), &mut cmd)
}

/// `html` with each line's indentation dropped, but inside `<pre>` and `<textarea>`, where it is
/// content: a line break still separates what it did, and gzip, which makes runs of spaces cheap
/// but not free, sends the lesson page about 0.9 KB less.
fn unindent(html: &str) -> String {
    const VERBATIM: [(&str, &str); 2] = [("<pre", "</pre>"), ("<textarea", "</textarea>")];
    let mut out = String::with_capacity(html.len());
    let mut verbatim = false;
    for line in html.split_inclusive('\n') {
        out.push_str(if verbatim { line } else { line.trim_start_matches([' ', '\t']) });
        // Whichever of the tags comes last on the line says whether the next line is content.
        let last = |tag: &str| {
            line.match_indices(tag)
                // `<pre` opens one only before a space, `>` or a line break (not `<prefix>`).
                .filter(|&(i, t)| t.ends_with('>') || line[i + t.len()..].starts_with([' ', '>', '\n', '\r']))
                .map(|(i, _)| i)
                .last()
        };
        let opened = VERBATIM.iter().filter_map(|(open, _)| last(open)).max();
        let closed = VERBATIM.iter().filter_map(|(_, close)| last(close)).max();
        verbatim = match (opened, closed) {
            (Some(o), Some(c)) => o > c,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => verbatim,
        };
    }
    out
}

/// The `.html` files at the top of `www` (the pages).
fn html_pages(www: &Path) -> Result<Vec<String>> {
    let mut pages = Vec::new();
    for entry in fs::read_dir(www)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name.ends_with(".html") {
            pages.push(name);
        }
    }
    pages.sort();
    Ok(pages)
}

/// The local `src` of each `<script type="module" src=...>` in `html`, relative to the page.
fn module_scripts(html: &str) -> Vec<String> {
    let mut found = Vec::new();
    for tag in html.split("<script").skip(1) {
        let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
        if !tag.contains("type=\"module\"") {
            continue;
        }
        let Some(start) = tag.find("src=\"") else { continue };
        let src = &tag[start + 5..];
        let src = &src[..src.find('"').unwrap_or(src.len())];
        if !src.contains(':') && !src.starts_with('/') {
            found.push(src.trim_start_matches("./").to_string());
        }
    }
    found
}

/// Refuses bundled output (all `out` holds yet) outside `js/` that reads `import.meta.url`: its
/// relative URLs would resolve from somewhere its source did not live.
fn check_relative_urls(out: &Path) -> Result<()> {
    let mut files = Vec::new();
    crate::collect_files(out, &mut files)?;
    for file in files {
        let relative = file.strip_prefix(out).expect("collected under the output");
        let dir = relative.parent().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
        let is_js = file.extension().is_some_and(|e| e == "js");
        if is_js && dir != "js" && fs::read_to_string(&file)?.contains("import.meta.url") {
            bail!(
                "{} reads import.meta.url but was bundled outside js/: find files through js/wasm.js's pkgUrl",
                relative.display()
            );
        }
    }
    Ok(())
}

/// Copies the files of `from` that `keep` accepts into `to`, keeping their paths.
pub fn copy_tree(from: &Path, to: &Path, keep: &dyn Fn(&Path) -> bool) -> Result<()> {
    let mut files = Vec::new();
    crate::collect_files(from, &mut files)?;
    for file in files {
        let relative = file.strip_prefix(from).expect("collected under the source");
        if !keep(relative) {
            continue;
        }
        let target = to.join(relative);
        fs::create_dir_all(target.parent().expect("a file has a parent"))?;
        fs::copy(&file, &target).with_context(|| format!("copying {}", file.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unindents_all_but_pre_and_textarea_content() {
        let html = "<main>\n  <p>One\n    two</p>\n  <pre class=x>a\n  b</pre>\n  <textarea>\n  c\n  </textarea>\n  <pre>d</pre>\n  <p>e</p>\n</main>\n";
        assert_eq!(
            unindent(html),
            "<main>\n<p>One\ntwo</p>\n<pre class=x>a\n  b</pre>\n<textarea>\n  c\n  </textarea>\n<pre>d</pre>\n<p>e</p>\n</main>\n"
        );
        // A tag that only begins like one is not it.
        assert_eq!(unindent("<prefix>\n  x\n"), "<prefix>\nx\n");
    }

    #[test]
    fn finds_the_pages_local_module_scripts() {
        let html = r#"<script type="module" src="./main.js"></script>
            <script src="classic.js"></script>
            <script type="module" src="js/lab-page.js" defer></script>
            <script type="module" src="https://example.com/x.js"></script>
            <script type="module" src="/abs.js"></script>
            <script type="module">inline()</script>"#;
        assert_eq!(module_scripts(html), ["main.js", "js/lab-page.js"]);
    }

    #[test]
    fn preloads_what_a_page_imports_statically_and_a_labs_wasm() {
        let (www, out) = (Path::new("/r/www"), Path::new("/r/target/site"));
        let meta = serde_json::json!({ "outputs": {
            "../target/site/js/lab-page.js": { "entryPoint": "js/lab-page.js", "inputs": {},
                "imports": [{ "path": "../target/site/js/chunk-A.js", "kind": "import-statement" }] },
            "../target/site/js/chunk-A.js": { "inputs": { "js/wasm.js": {} },
                "imports": [{ "path": "../target/site/js/chunk-B.js", "kind": "import-statement" },
                            { "path": "../target/site/js/chunk-L.js", "kind": "dynamic-import" }] },
            "../target/site/js/chunk-B.js": { "inputs": {}, "imports": [] },
            "../target/site/js/chunk-L.js": { "inputs": {}, "imports": [] },
            "../target/site/main.js": { "entryPoint": "main.js", "inputs": {}, "imports": [] },
        }});
        let links = preloads(&meta, www, out, &["js/lab-page.js".to_string()], crate::modules::CRATE_NAME);
        assert_eq!(
            links,
            [
                r#"<link rel="modulepreload" href="./js/chunk-A.js">"#,
                r#"<link rel="modulepreload" href="./js/chunk-B.js">"#,
                r#"<link rel="modulepreload" href="./pkg/kneelab_web.js">"#,
                r#"<link rel="preload" href="./pkg/kneelab_web_bg.wasm" as="fetch" type="application/wasm" crossorigin>"#,
            ]
        );
        // A page without a lab preloads no wasm; one with nothing to import, nothing.
        assert!(preloads(&meta, www, out, &["main.js".to_string()], crate::modules::CRATE_NAME).is_empty());
        // The links go before the module script, at its indentation, in place of older ones (a
        // page's own preload of a font stays).
        let font = r#"<link rel="preload" href="./font.woff2" as="font" crossorigin>"#;
        let script = r#"<script type="module" src="x.js"></script>"#;
        let html =
            format!("<head>\n  {font}\n  <link rel=\"modulepreload\" href=\"./js/old.js\">\n  {script}\n</head>\n");
        assert_eq!(
            with_preloads(&html, &links[..1]),
            format!("<head>\n  {font}\n  {}\n  {script}\n</head>\n", links[0])
        );
    }

    #[test]
    fn a_page_names_its_first_module_in_its_head_or_gets_the_lab_s() {
        let head = |content: &str| format!("<head>\n  <meta name=\"kneelab-module\" content=\"{content}\">\n</head>");
        assert_eq!(page_module(&head("kneelab_lesson")), "kneelab_lesson");
        assert_eq!(page_module(&head("kneelab_later")), "kneelab_web", "only the two first modules");
        assert_eq!(page_module("<head></head>"), "kneelab_web");
    }

    #[test]
    fn refuses_bundled_code_reading_its_url_outside_js() {
        let out = std::env::temp_dir().join(format!("xtask-bundle-test-{}", std::process::id()));
        fs::create_dir_all(out.join("js/lesson")).unwrap();
        fs::write(out.join("js/chunk.js"), "new URL('../pkg/x.wasm', import.meta.url)").unwrap();
        fs::write(out.join("main.js"), "import './js/chunk.js'").unwrap();
        assert!(check_relative_urls(&out).is_ok());
        for bad in ["main.js", "js/lesson/sweeps.js"] {
            fs::write(out.join(bad), "fetch(new URL('x', import.meta.url))").unwrap();
            let err = check_relative_urls(&out).unwrap_err().to_string();
            assert!(err.contains("import.meta.url"), "{bad}: {err}");
            fs::write(out.join(bad), "").unwrap();
        }
        fs::remove_dir_all(out).unwrap();
    }

    /// One small module per concept (ARCHITECTURE.md, `www/`): no page module is longer than this.
    const MAX_MODULE_LINES: usize = 300;

    #[test]
    fn every_page_module_is_small() {
        let mut long = Vec::new();
        let mut dirs = vec![crate::repo_root().join("www").join("js")];
        while let Some(dir) = dirs.pop() {
            for entry in fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "js") {
                    let lines = fs::read_to_string(&path).unwrap().lines().count();
                    if lines > MAX_MODULE_LINES {
                        long.push(format!("{} ({lines} lines)", path.display()));
                    }
                }
            }
        }
        assert!(long.is_empty(), "split these into modules of at most {MAX_MODULE_LINES} lines: {long:?}");
    }
}
