#!/usr/bin/env bash
# Drive the real osce-tui TUI in tmux through a short human-doctor encounter
# and save a capture of the screen after each step.
#
#   scripts/tmux_walkthrough.sh [OUT_DIR]
#
# Environment: OSCE_TUI (the osce-tui executable, default: osce-tui on PATH or
# /tmp/venv/bin/osce-tui), CASE (default chest-pain-46m), COLS/ROWS (100x30).
# Exit status is non-zero if a step does not show what it should.
set -euo pipefail

OUT=${1:-$(mktemp -d -t osce-walkthrough.XXXX)}
CASE=${CASE:-chest-pain-46m}
COLS=${COLS:-100}
ROWS=${ROWS:-30}
BIN=${OSCE_TUI:-$(command -v osce-tui || echo /tmp/venv/bin/osce-tui)}
SESSION="osce-walk-$$"
WORK="$OUT/work"
mkdir -p "$WORK"
# A config of our own: the walkthrough must not depend on the user's settings.
export OSCE_TUI_CONFIG="$WORK/none.toml"

cleanup() { tmux kill-session -t "$SESSION" 2>/dev/null || true; }
trap cleanup EXIT

step=0
capture() {  # capture NAME: save the visible pane
    step=$((step + 1))
    local file
    file=$(printf '%s/%02d-%s.txt' "$OUT" "$step" "$1")
    tmux capture-pane -p -t "$SESSION" > "$file"
    echo "captured $file"
}

wait_for() {  # wait_for TEXT [SECONDS]: poll the pane until TEXT shows up
    local text=$1 limit=${2:-15} i=0
    while ! tmux capture-pane -p -t "$SESSION" | grep -qF -- "$text"; do
        i=$((i + 1))
        if [ "$i" -gt $((limit * 5)) ]; then
            echo "FAILED: '$text' did not appear; screen was:" >&2
            tmux capture-pane -p -t "$SESSION" >&2
            exit 1
        fi
        sleep 0.2
    done
}

type_line() {  # type_line TEXT: type into the focused input and press Enter
    tmux send-keys -t "$SESSION" -l -- "$1"
    # A moment between text and Enter, as a typist would leave: otherwise the
    # terminal may deliver both in one read and the Enter can be missed.
    sleep 0.3
    tmux send-keys -t "$SESSION" Enter
}

type_text() {  # type_text TEXT: type without Enter (note editor fields)
    tmux send-keys -t "$SESSION" -l -- "$1"
    sleep 0.5
}

press() {  # press KEY: one key, then a pause
    tmux send-keys -t "$SESSION" "$1"
    sleep 0.5
}

cd "$WORK"
tmux new-session -d -s "$SESSION" -x "$COLS" -y "$ROWS" \
    "$BIN run $CASE --doctor human --patient offline --judge offline --sessions-dir $WORK/sessions"

wait_for "your turn: doctor" 20
capture doorway

type_line "Hello, I'm Dr Lee. What brings you in today?"
wait_for "Patient  offline  t0003"
type_line "When did the pain start?"
wait_for "t0005"
type_line "Does the pain go anywhere else?"
wait_for "t0007"
capture history

# A typo'd command is refused on the status line and stays in the input.
type_line "/exma heart, lungs"
wait_for "unknown command /exma"
wait_for "/exma heart, lungs"
capture typo
tmux send-keys -t "$SESSION" C-u
sleep 0.3
type_line "/exam heart, lungs"
wait_for "Exam finding"
type_line "/order ECG"
wait_for "Test result"
capture exam

type_line "/phase closure"
wait_for "Phase: closure"
type_line "I'm worried this could be your heart. We'll do an ECG and blood tests and keep you monitored."
# At closure the patient answers with the case's challenging question.
sleep 1.5
wait_for "your turn: doctor"
capture closure

type_line "/note"
wait_for "Ctrl+S submits"
sleep 1.5
type_text "46M with 2 hours of pressure-like chest pain radiating to the left arm."
press Tab
type_text "S4 gallop; lungs clear."
press Tab
type_text "Acute coronary syndrome"
press Tab
type_text "pressure-like chest pain"
capture note
tmux send-keys -t "$SESSION" C-s
wait_for "final" 30
capture results

tmux send-keys -t "$SESSION" j
wait_for "Exported"
capture exported

tmux send-keys -t "$SESSION" C-q
sleep 0.5
saved=$(ls "$WORK"/sessions/*.json)
echo "session file: $saved"
grep -q '"status": "finished"' "$saved" || { echo "FAILED: session not finished" >&2; exit 1; }
echo "walkthrough OK; captures in $OUT"
