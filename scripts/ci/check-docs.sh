#!/usr/bin/env bash
# Checks the Markdown documentation: every relative link in every tracked *.md file (and every
# new one git does not ignore) points at a file or directory that exists, and every #anchor at a
# heading of the target page as GitHub names it (lowercase; punctuation but `-` and `_` dropped;
# spaces to `-`; a repeated heading gets -1, -2, …) or an explicit <a name|id="…">. http(s),
# mailto and other scheme links are not followed; links inside code spans and fenced code blocks
# are not links. Also checks that README.md, the front door, stays within 10,240 bytes.
#
# Prints each problem as `file:line: link: why` and exits 1 if there is any; 0 otherwise.
#
# Usage: scripts/ci/check-docs.sh [FILE.md …]   (default: every Markdown file of the repository)
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.md' | sort -u)
fi
exec python3 - "${files[@]}" <<'PY'
import os
import re
import sys

README_LIMIT = 10240
FENCE = re.compile(r'^\s{0,3}(`{3,}|~{3,})')
HEADING = re.compile(r'^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$')
INLINE_LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)')
REF_DEF = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)')
HTML_ANCHOR = re.compile(r'<a\s+[^>]*(?:name|id)\s*=\s*"([^"]+)"', re.I)
# A code span may run over lines, never over a blank one.
CODE_SPAN = re.compile(r'(`+)((?:(?!\n[ \t]*\n).)+?)\1', re.S)
SCHEME = re.compile(r'^[a-zA-Z][a-zA-Z0-9+.-]*:')


def blank_code_spans(lines):
    """The (number, text) lines with every code span replaced by spaces (lines and columns kept)."""
    numbers = [n for n, _ in lines]
    text = '\n'.join(t for _, t in lines)
    text = CODE_SPAN.sub(lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text)
    return list(zip(numbers, text.split('\n')))


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    fence = None
    for number, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)[0] * len(m.group(1))
            continue
        if fence is not None:
            if m and m.group(1).startswith(fence) and line.strip().strip(fence[0]) == '':
                fence = None
            continue
        yield number, line


def slug(text):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', text)  # links and images: their text
    text = re.sub(r'<[^>]+>', '', text)                      # inline HTML tags
    text = text.replace('`', '').replace('*', '')
    text = re.sub(r'(?<!\w)_+|_+(?!\w)', '', text)           # _emphasis_, not snake_case
    text = text.strip().lower()
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


anchor_cache = {}


def anchors(path):
    if path not in anchor_cache:
        found, seen = set(), {}
        for _, line in prose_lines(path):
            for name in HTML_ANCHOR.findall(line):
                found.add(name)
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else '%s-%d' % (base, count))
        anchor_cache[path] = found
    return anchor_cache[path]


def check_link(source, target):
    """Why `target`, written in `source`, does not resolve; None when it does."""
    if target.startswith('<') and target.endswith('>'):
        target = target[1:-1]
    if SCHEME.match(target) or target.startswith('//'):
        return None  # http(s), mailto, …: not checked here
    path, _, anchor = target.partition('#')
    path = path.split('?', 1)[0]
    if path:
        if path.startswith('/'):
            resolved = os.path.normpath(path.lstrip('/'))
        else:
            resolved = os.path.normpath(os.path.join(os.path.dirname(source), path))
        if resolved.startswith('..'):
            return 'points outside the repository'
        if not os.path.exists(resolved):
            return 'no such file: %s' % resolved
    else:
        resolved = source
    if anchor and resolved.endswith('.md') and os.path.isfile(resolved):
        if anchor not in anchors(resolved):
            return 'no heading #%s in %s' % (anchor, resolved)
    return None


problems = []
for source in sys.argv[1:]:
    if not os.path.isfile(source):
        problems.append('%s:0: %s: no such file' % (source, source))
        continue
    for number, text in blank_code_spans(list(prose_lines(source))):
        targets = [m.group(1) for m in INLINE_LINK.finditer(text)]
        m = REF_DEF.match(text)
        if m:
            targets.append(m.group(1))
        for target in targets:
            why = check_link(source, target)
            if why:
                problems.append('%s:%d: %s: %s' % (source, number, target, why))

if os.path.isfile('README.md'):
    size = os.path.getsize('README.md')
    if size > README_LIMIT:
        problems.append('README.md:1: README.md: %d bytes, more than the %d a front door may have '
                        '(move detail into docs/)' % (size, README_LIMIT))

for p in problems:
    print(p)
if problems:
    print('check-docs: %d problem(s) in %d file(s) checked' % (len(problems), len(sys.argv) - 1),
          file=sys.stderr)
    sys.exit(1)
print('check-docs: %d Markdown files, every relative link and anchor resolves' % (len(sys.argv) - 1))
PY
