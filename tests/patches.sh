#!/bin/sh
# patches.sh -- every exercise patch (tests/exercises/*.patch) applies to today's chapters
# exactly: no offset, no fuzz, so that `patch -p1 < FILE`, as the book says, leaves no
# .orig files behind. Fails naming the patch and what patch said.
status=0
count=0
for p in tests/exercises/*.patch; do
    count=$((count + 1))
    said=$(patch -p1 --dry-run --force < "$p" 2>&1)
    if [ $? -ne 0 ] || printf '%s\n' "$said" | grep -qi 'offset\|fuzz\|hunk.*failed'; then
        printf 'patches: %s does not apply exactly:\n%s\n' "$p" "$said" >&2
        status=1
    fi
done
[ $status -eq 0 ] && echo "patches: $count exercise patches apply with no offset and no fuzz"
exit $status
