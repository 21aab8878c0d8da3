# The external commands that a file of the repository runs, one per line:
#   TIER FILE:LINE COMMAND
# for tools/check-commands. MODE is how to read FILE: sh (a shell script), make (the Makefile:
# its recipes and $(shell ...)), c (a test in C: the shell commands it builds for system,
# popen and execl), gp (a gnuplot script: its system(...) calls) or py (a Python script: the
# programs it starts through subprocess). TIER is "base" for what `make` and `make check` run
# and "extra" for what only the benchmarks, the web edition or the fresh-Debian run use
# (their own lists in tools/install-deps); BASE=no makes a whole file extra.
#
# The reading is a shell's, simplified: comments and the text of quotes are dropped (but for
# the code inside "$(...)" and after sh -c '...'), the rest is cut at | ; & ( ) ` { } and
# newlines, and the first word of each piece, after assignments, keywords and wrappers such
# as env, xargs and timeout, is a command. Words that name no program (a shell's builtins, the
# script's own functions, a path inside the repository, a variable) are left to the caller.
# Plain awk (Debian's mawk): no gensub, no arrays as match's third argument.

BEGIN { nfunctions = 0 }

# ---------------------------------------------------------------- shell text
# The code of TEXT with every quoted literal replaced by the character \002, except the code inside
# "$(...)" and a single-quoted program after -c.
function code_of(text,    out, i, n, c, state, depth, stack, top, prev, keep) {
    out = ""; n = length(text); state = "code"; top = 0; depth = 0
    for (i = 1; i <= n; i++) {
        c = substr(text, i, 1)
        if (state == "squote") {
            if (c == "'") { state = "code"; out = out (keep ? ";" : "\002") }
            else if (keep) out = out c
            continue
        }
        if (state == "dquote") {
            if (c == "\\") { i++; continue }
            if (c == "\"") { state = "code"; out = out "\002"; continue }
            if (c == "$" && substr(text, i + 1, 1) == "(") {
                stack[++top] = depth; depth = 0; state = "code"; out = out "$("; i++; continue
            }
            if (c == "`") { out = out "`"; continue }
            continue
        }
        # state code
        if (c == "\\") { out = out substr(text, i, 2); i++; continue }
        if (c == "'") {
            prev = out; sub(/[ \t]+$/, "", prev)
            # sh -c '...' and bash -c '...' hold code; so does the argument of a function of
            # the script that runs its argument so (fresh-debian.sh's in_root)
            keep = (prev ~ /(^|[ \t\/(])(ba)?sh([ \t]+[-a-z]+)*[ \t]+-c$/ || prev ~ /(^|[ \t])in_root$/)
            state = "squote"; if (keep) out = out ";"; continue
        }
        if (c == "\"") { state = "dquote"; continue }
        if (c == "#" && (i == 1 || substr(text, i - 1, 1) ~ /[ \t;|&(]/)) {
            while (i <= n && substr(text, i, 1) != "\n") i++
            out = out "\n"; continue
        }
        if (c == "(") depth++
        if (c == ")") {
            if (depth == 0 && top > 0) { depth = stack[top--]; state = "dquote"; out = out ")"; continue }
            if (depth > 0) depth--
        }
        out = out c
    }
    END_STATE = state
    return out
}

# Every command of the shell text TEXT, which starts on line LINE of FILE.
function shell_commands(text, file, line, tier,    code, pieces, np, p, piece, words, nw, w, word, skip_next) {
    code = code_of(text)
    gsub(/\$\{[^}]*\}/, "\003", code)           # ${VAR}, ${VAR:-x}
    gsub(/\$?\(\([^()]*(\([^()]*\)[^()]*)*\)\)/, "\002", code)   # (( arithmetic )): no commands
    gsub(/[A-Za-z_][A-Za-z_0-9]*\+?=\([^)]*\)?/, "\003", code)   # NAME=(an array), NAME+=(more)
    # a case's patterns, "word)" or "a|b)" at the start of a line, are no commands
    code = "\n" code
    gsub(/\n[ \t]*\(?[^ \t\n();]+\)/, "\n", code)
    gsub(/[ \t]in[ \t]+\(?[^ \t\n();]+\)/, " in\n", code)      # case "$x" in a|b) command
    # what follows a closing parenthesis up to the next separator goes on the command
    # before it: git -C $(dirname x) rev-parse, $(pwd)/name
    gsub(/\)[^;|&\n(){}`]*/, "\n", code)
    gsub(/\|\||&&|;;|\$\(|[|;&(){}`\n]/, "\n", code)
    np = split(code, pieces, "\n")
    for (p = 1; p <= np; p++) {
        piece = pieces[p]
        nw = split(piece, words, /[ \t]+/)
        w = 1; if (words[1] == "") w = 2
        skip_next = 0
        for (; w <= nw; w++) {
            word = words[w]
            if (skip_next) { skip_next = 0; continue }
            if (word == "") continue
            if (word ~ /^[0-9]*[<>]/) { if (word ~ /^[0-9]*[<>]+&?$/) skip_next = 1; continue }
            if (word ~ /^[A-Za-z_][A-Za-z_0-9]*(\[[^]]*\])?\+?=/) continue
            if (word ~ /^(if|then|else|elif|do|while|until|!|time|exec|command|nohup|sudo|\$SUDO|\003|builtin|eval|-|--)$/) continue
            if (word ~ /^(for|case|in|fi|done|esac|function|select|return|local|export|readonly|declare|set|unset|shift|exit|break|continue|trap|wait|read|cd|echo|printf|test|\[|\[\[|\]\]|true|false|:|\.|source|type|let|umask|ulimit|shopt|getopts|hash|alias|pwd|kill)$/) break
            if (word == "env" || word == "xargs" || word == "timeout" || word == "nice" || word == "stdbuf") {
                print tier, file ":" line, word
                # their options (and timeout's duration) come before the command they run
                while (w + 1 <= nw && (words[w + 1] ~ /^-/ || words[w + 1] ~ /^[0-9.]+[smhd]?$/ || words[w + 1] ~ /^[A-Za-z_][A-Za-z_0-9]*=/)) {
                    w++
                    if (words[w] ~ /^-[unIdEaLnPs]$/ && words[w] != "-s") w++
                }
                continue
            }
            if (word ~ /[\002\003]/ || word ~ /^%/ || word ~ /^[-+*?]/ || word ~ /\$/ || word ~ /^[0-9]/) break
            gsub(/["'\\]/, "", word)
            if (word ~ /^\//) { print tier, file ":" line, word; break }
            if (word ~ /\//) break                 # a program of the repository or the build
            if (word !~ /^[A-Za-z_][A-Za-z0-9_.+-]*$/) break
            if (word in functions) break
            print tier, file ":" line, word
            break
        }
    }
}

# ---------------------------------------------------------------- the modes
# A shell script: its functions first (they are no programs), then its text line by line,
# with a line that ends in \ joined to the next.
function read_sh(file,    line, n, text, first, lines, i, name, heredoc, t) {
    n = 0
    while ((getline line < file) > 0) lines[++n] = line
    close(file)
    for (i = 1; i <= n; i++)
        if (match(lines[i], /^[ \t]*[A-Za-z_][A-Za-z_0-9-]*[ \t]*\(\)/)) {
            name = substr(lines[i], RSTART, RLENGTH); gsub(/[ \t()]/, "", name); functions[name] = 1
        }
    text = ""; first = 0; heredoc = ""
    for (i = 1; i <= n; i++) {
        line = lines[i]
        if (heredoc != "") { t = line; sub(/^\t+/, "", t); if (t == heredoc) heredoc = ""; continue }
        if (line ~ /^[ \t]*#/) { if (text == "") continue; line = "" }
        # a here-document's lines are data: read the line that opens it, skip to its end word
        if (match(line, /<<-?[ \t]*['"]?[A-Za-z_]+['"]?/)) {
            heredoc = substr(line, RSTART, RLENGTH); gsub(/[<\-'" \t]/, "", heredoc)
            line = substr(line, 1, RSTART - 1) substr(line, RSTART + RLENGTH)
        }
        if (text == "") first = i
        if (line ~ /\\$/) { text = text substr(line, 1, length(line) - 1) " "; continue }
        text = text line
        # a quote left open goes on to the next line
        if (open_quotes(text)) { text = text "\n"; continue }
        shell_commands(text, FILE_NAME, first, TIER); text = ""
    }
    if (text != "") shell_commands(text, FILE_NAME, first, TIER)
}

function open_quotes(text) {
    code_of(text)
    return END_STATE != "code"
}

# The Makefile: its variables, then each rule's recipe with them put in. A rule whose recipe
# calls tools/install-deps --bench or --html is extra, as is all it runs.
function read_make(file,    line, n, lines, i, j, name, value, rule, ruletier, text, first, expanded, k, shellcmd) {
    n = 0
    while ((getline line < file) > 0) lines[++n] = line
    close(file)
    rule = 0
    for (i = 1; i <= n; i++) {
        line = lines[i]
        if (line ~ /^[A-Za-z_][A-Za-z_0-9]*[ \t]*(:=|\?=|=)/) {
            name = line; sub(/[ \t]*(:=|\?=|=).*/, "", name)
            value = line; sub(/^[^=]*=[ \t]*/, "", value)
            while (value ~ /\\$/ && i < n) { value = substr(value, 1, length(value) - 1) " " lines[++i] }
            if (!(name in vars)) vars[name] = value
            while (match(value, /\$\(shell [^ )]+/)) {
                shellcmd = substr(value, RSTART + 8, RLENGTH - 8)
                print "base", FILE_NAME ":" i, shellcmd
                value = substr(value, RSTART + RLENGTH)
            }
        } else if (line ~ /^[^\t#][^=]*:/) rule++
        else if (line ~ /^\t/) { recipe_rule[i] = rule; if (line ~ /install-deps --(bench|html)/) extra_rule[rule] = 1 }
    }
    vars["MAKE"] = "make"; vars["SHELL"] = "/bin/bash"
    print "base", FILE_NAME ":1", "/bin/bash"
    text = ""
    for (i = 1; i <= n; i++) {
        if (!(i in recipe_rule)) continue
        line = lines[i]; sub(/^\t[@+-]*/, "", line)
        if (text == "") first = i
        if (line ~ /\\$/) { text = text substr(line, 1, length(line) - 1) " "; continue }
        text = text line
        expanded = expand(text, 0)
        ruletier = (recipe_rule[i] in extra_rule) ? "extra" : TIER
        shell_commands(expanded, FILE_NAME, first, ruletier)
        text = ""
    }
}

# Make's variables put into TEXT (three levels deep); the automatic ones and the functions
# ($(if ...), $(filter ...)) become a word that is no command.
function expand(text, level,    out, name, start, rest) {
    gsub(/\$\$/, "\001", text)
    out = ""
    while (match(text, /\$\([A-Za-z_][A-Za-z_0-9]*\)|\$[@<^*?]|\$\([a-z]+ /)) {
        out = out substr(text, 1, RSTART - 1)
        name = substr(text, RSTART + 2, RLENGTH - 3)
        rest = substr(text, RSTART + RLENGTH)
        if (substr(text, RSTART + 1, 1) != "(") out = out "\002"
        else if (substr(text, RSTART + RLENGTH - 1, 1) == " ") {
            out = out "\002"; rest = skip_call(rest)
        } else if (name in vars && level < 3) out = out expand(vars[name], level + 1)
        else out = out "\002"
        text = rest
    }
    out = out text
    gsub(/\001/, "$", out)
    return out
}

# The rest of TEXT after the closing parenthesis of a make function called just before it.
function skip_call(text,    i, depth, c) {
    depth = 1
    for (i = 1; i <= length(text); i++) {
        c = substr(text, i, 1)
        if (c == "(") depth++
        else if (c == ")" && --depth == 0) return substr(text, i + 1)
    }
    return ""
}

# A test in C: each string literal (adjacent ones joined, as C joins them) that is a shell
# command: the argument of system and popen, the path of execl, the format of an snprintf
# into a buffer named for a command; an snprintf into `arguments` and run()'s second
# argument are the program's own arguments, which a pipe may follow.
function read_c(file,    line, all, n, i, c, state, stmt, lit, lineno, start, esc, group, gline) {
    all = ""
    while ((getline line < file) > 0) all = all line "\n"
    close(file)
    n = length(all); state = "code"; stmt = ""; lineno = 1; group = ""
    for (i = 1; i <= n; i++) {
        c = substr(all, i, 1)
        if (c == "\n") lineno++
        if (state == "code") {
            if (c == "/" && substr(all, i + 1, 1) == "*") { state = "comment"; i++; continue }
            if (c == "/" && substr(all, i + 1, 1) == "/") { state = "line"; continue }
            if (c ~ /[ \t\n]/) { if (stmt != "" && stmt !~ / $/) stmt = stmt " "; continue }
            if (c == "\"") { if (group == "") gline = lineno; state = "string"; continue }
            # a macro between two literals (" (" MPIRUN2 " %s ") is a word of the command
            if (group != "" && match(substr(all, i), /^[A-Z][A-Z0-9_]*[ \t\n]*"/)) {
                group = group " \002 "; i += RLENGTH - 2; continue
            }
            if (group != "") { c_group(stmt, group, gline); stmt = stmt "S"; group = "" }
            if (c == "'") { state = "char"; continue }
            if (c == ";" || c == "{" || c == "}") { stmt = ""; continue }
            stmt = stmt c; continue
        }
        if (state == "comment") { if (c == "*" && substr(all, i + 1, 1) == "/") { state = "code"; i++ }; continue }
        if (state == "line") { if (c == "\n") state = "code"; continue }
        if (state == "char") { if (c == "\\") i++; else if (c == "'") state = "code"; continue }
        # a string literal
        if (c == "\\") {
            esc = substr(all, ++i, 1)
            group = group (esc == "n" ? "\n" : esc == "t" ? "\t" : esc == "0" ? " " : esc)
            continue
        }
        if (c == "\"") { state = "code"; continue }
        group = group c
    }
}

# The literal GROUP of a C statement whose text before it is BEFORE (other literals as S).
function c_group(before, group, line) {
    gsub(/ *\( */, "(", before); gsub(/ *, */, ",", before); sub(/ +$/, "", before)
    if (before ~ /(^|[^A-Za-z_])(system|popen)\($/ || before ~ /snprintf\((command|script|shell|environment|more|same|head),[^,]*,$/ || before ~ /(^|[^A-Za-z_])run\($/)
        shell_commands(group, FILE_NAME, line, TIER)
    else if (before ~ /snprintf\(arguments,[^,]*,$/ || before ~ /(^|[^A-Za-z_])run\([^,]*,$/)
        shell_commands("./transformer " group, FILE_NAME, line, TIER)
    else if (before ~ /(^|[^A-Za-z_])execl\($/) print TIER, FILE_NAME ":" line, group
}

# A gnuplot script: the strings given to system(...).
function read_gp(file,    line, n, s, cmd) {
    n = 0
    while ((getline line < file) > 0) {
        n++
        s = line
        while (match(s, /system\((sprintf\()?["'][^"']*/)) {
            cmd = substr(s, RSTART, RLENGTH); sub(/^system\((sprintf\()?["']/, "", cmd)
            shell_commands(cmd, FILE_NAME, n, TIER)
            s = substr(s, RSTART + RLENGTH)
        }
    }
    close(file)
}

# A Python script: the first word of each argument list given to subprocess.
function read_py(file,    line, all, n, lineno, s, cmd, before) {
    all = ""; n = 0
    while ((getline line < file) > 0) { n++; all = all line "\001" }
    close(file)
    s = all
    while (match(s, /(Popen|run|check_output|check_call|call)\([ \t\001]*\[[ \t\001]*['"][^'"]+['"]/)) {
        cmd = substr(s, RSTART, RLENGTH); sub(/^[^'"]*['"]/, "", cmd); sub(/['"]$/, "", cmd)
        before = substr(s, 1, RSTART); lineno += gsub(/\001/, "", before)
        if (cmd !~ /\// || cmd ~ /^\//) print TIER, FILE_NAME ":" (lineno + 1), cmd
        s = substr(s, RSTART + RLENGTH)
    }
}

END {
    FILE_NAME = FILE; TIER = (BASE == "no") ? "extra" : "base"
    if (MODE == "sh") read_sh(FILE)
    else if (MODE == "make") read_make(FILE)
    else if (MODE == "c") read_c(FILE)
    else if (MODE == "gp") read_gp(FILE)
    else if (MODE == "py") read_py(FILE)
}
