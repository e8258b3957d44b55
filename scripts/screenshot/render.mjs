// Renders a markdown plan comment as GitHub shows it, for a screenshot:
// GitHub-flavoured markdown (marked, with GitHub's alerts), GitHub's
// stylesheet (github-markdown-css) and GitHub's colours for diff blocks
// (the pl-mi1 / pl-md classes GitHub's highlighter gives + and - lines).
// Usage: node render.mjs NODE_MODULES PLAN.md OUT.html
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const [modules, input, output] = process.argv.slice(2);
const require = createRequire(join(modules, "x.js"));
const { Marked } = require("marked");
const markedAlert = require("marked-alert");
const css = readFileSync(require.resolve("github-markdown-css/github-markdown-light.css"), "utf8");

const escape = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

const marked = new Marked({ gfm: true });
marked.use(markedAlert.default ? markedAlert.default() : markedAlert());
marked.use({
  renderer: {
    code(code, lang) {
      const text = typeof code === "object" ? code.text : code;
      const language = typeof code === "object" ? code.lang : lang;
      if (language !== "diff") {
        return `<div class="highlight"><pre>${escape(text)}</pre></div>\n`;
      }
      const lines = text.split("\n").map((line) => {
        const cls = line.startsWith("+") ? "pl-mi1" : line.startsWith("-") ? "pl-md" : "";
        return cls ? `<span class="${cls}">${escape(line)}</span>` : escape(line);
      });
      return `<div class="highlight highlight-source-diff"><pre>${lines.join("\n")}</pre></div>\n`;
    },
  },
});

// Open the fold, as a reviewer does.
const body = marked.parse(readFileSync(input, "utf8")).replace(/<details>/g, "<details open>");
writeFileSync(output, `<!doctype html>
<html><head><meta charset="utf-8"><title>pushform plan</title>
<style>${css}
body { margin: 0; background: #fff; font-family: -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }
.comment { margin: 16px; border: 1px solid #d0d7de; border-radius: 6px; }
.comment-header { background: #f6f8fa; border-bottom: 1px solid #d0d7de; padding: 8px 16px; font-size: 14px; color: #59636e; border-radius: 6px 6px 0 0; }
.comment-header b { color: #1f2328; }
.markdown-body { padding: 16px; font-size: 14px; }
.markdown-body .markdown-alert { padding: .5rem 1rem; margin-bottom: 16px; border-left: .25em solid #9a6700; }
.markdown-body .markdown-alert-caution { border-left-color: #cf222e; }
.markdown-body .markdown-alert-title { font-weight: 500; }
</style></head>
<body><div class="comment" id="comment"><div class="comment-header"><b>github-actions</b> bot commented</div>
<div class="markdown-body">
${body}</div></div>
<script>document.title = "height=" + Math.ceil(document.getElementById("comment").getBoundingClientRect().bottom + 16);</script>
</body></html>
`);
