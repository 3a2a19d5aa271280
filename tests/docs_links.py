#!/usr/bin/python3
"""Every relative Markdown link of the README and docs/*.md leads somewhere: the file exists and,
where the link names a heading (`FILE.md#anchor` or `#anchor`), the file has a heading whose
GitHub anchor that is. A section renamed without its links fails here, not in a reader's browser.

usage: docs_links.py SOURCE
Exit 0 pass, 1 fail.
"""
import glob
import os
import re
import sys

SOURCE = sys.argv[1]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*```")


def github_anchor(heading):
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|\*|_(?=\W)|(?<=\W)_", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    """The set of anchors of a Markdown file's headings (repeats get GitHub's -1, -2 suffixes)."""
    seen = {}
    found = set()
    inside_fence = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                inside_fence = not inside_fence
                continue
            match = None if inside_fence else HEADING.match(line)
            if not match:
                continue
            anchor = github_anchor(match.group(1))
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            found.add(anchor if count == 0 else f"{anchor}-{count}")
    return found


def links(path):
    """(line number, target) of every link outside code blocks and code spans."""
    inside_fence = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                inside_fence = not inside_fence
                continue
            if inside_fence:
                continue
            for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
                yield number, target


def broken_links(path):
    """Messages for each link of the file that leads nowhere."""
    problems = []
    for number, target in links(path):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto: are not this test's to reach
            continue
        file_part, _, anchor = target.partition("#")
        destination = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        where = f"{os.path.relpath(path, SOURCE)}:{number}"
        if not os.path.exists(destination):
            problems.append(f"{where}: link to {target}: no file {os.path.relpath(destination, SOURCE)}")
        elif anchor and destination.endswith(".md") and anchor not in anchors(destination):
            problems.append(f"{where}: link to {target}: {os.path.relpath(destination, SOURCE)} has no heading "
                            f"with anchor #{anchor}; rename the link to the heading's current anchor")
    return problems


def main():
    pages = [os.path.join(SOURCE, "README.md")] + sorted(glob.glob(os.path.join(SOURCE, "docs", "*.md")))
    problems = [problem for page in pages for problem in broken_links(page)]
    for problem in problems:
        print(problem)
    checked = sum(1 for page in pages for _ in links(page))
    if problems:
        print(f"{len(problems)} of {checked} links in {len(pages)} pages lead nowhere")
        return 1
    print(f"all {checked} links in {len(pages)} pages lead to a file and heading")
    return 0


if __name__ == "__main__":
    sys.exit(main())
