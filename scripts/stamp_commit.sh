#!/usr/bin/env bash
# Writes .decode-bench-commit at the top of the source tree: the current commit and, on a second
# line, "dirty" when tracked files have uncommitted changes. Run it before copying the tree
# without .git (rsync --exclude .git, a tarball): cmake/GitVersion.cmake reads the file when
# there is no git repository, so results still name the commit (meta.git.source "commit_file").
set -euo pipefail
cd "$(dirname "$0")/.."
sha=$(git rev-parse HEAD)
{
  echo "$sha"
  if [ -n "$(git status --porcelain --untracked-files=no)" ]; then echo dirty; fi
} >.decode-bench-commit
echo "stamp_commit: $(tr '\n' ' ' <.decode-bench-commit)"
