----------------------- MODULE SessionMutantSeqReset ------------------------
(***************************************************************************)
(* MUTANT of Session.tla: tla/check.mjs requires it to fail.               *)
(* EOF while busy resets seq to 0 (as entering failed does), so the next   *)
(* event of the request in flight repeats seq 1.                           *)
(* EXPECT: SeqGapless                                                      *)
(* Everything else is a copy of Session.tla; keep it in step.              *)
(***************************************************************************)
(***************************************************************************)
(* The protocol session of native-host protocol 1 (CONTRACT sections 2-5), *)
(* as implemented by fsm/session/session.go.                               *)
(*                                                                         *)
(* Requests are served one at a time; every request line gets exactly one *)
(* terminal event; seq is per request, starts at 1 and grows by exactly 1; *)
(* nothing is written after the session closed or its output failed.      *)
(*                                                                         *)
(* The variables phase, current, seq and used are the Go machine's State   *)
(* {Phase, Current, Seq, Used} (current = None where Go has "").  The      *)
(* actions are its triggers, one for one: Request(id), Shutdown(id),       *)
(* Malformed(id or None), Event, Terminal, EOF, WriteFailed.  Done is the  *)
(* usual stuttering step of a terminated system: closed and failed are     *)
(* final, and any other state without a successor is a deadlock the        *)
(* checker reports.  fsm/session/graph_test.go enumerates the Go machine   *)
(* and requires its graph to equal GraphView's projection of this spec     *)
(* (tla/Session.graph.json).                                               *)
(*                                                                         *)
(* The other variables are history variables: the machine does not have  *)
(* them, they record what was written so that the invariants can say what *)
(* the contract means.  They never enable or disable an action.           *)
(*                                                                         *)
(* SAFETY ONLY.  tla-checker checks the invariants below in every         *)
(* reachable state; nothing here states or checks liveness (that a        *)
(* started request eventually gets its terminal event, that the host      *)
(* eventually exits).  The Go explorer in graph_test.go checks the finite *)
(* stand-ins: every non-final state can still reach idle or closed, and   *)
(* no state but closed/failed is stuck.                                   *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS
    Ids,        \* request_ids the client may use, e.g. {"a", "b"}
    MaxEvents   \* bound on non-terminal events per request (finiteness only)

None == "none"  \* a request line that yielded no valid request_id; Go's ""

ASSUME None \notin Ids /\ MaxEvents \in Nat

Phases  == {"idle", "busy", "draining", "closed", "failed"}
Serving == {"busy", "draining"}   \* a request is in flight
Final   == {"closed", "failed"}   \* the process exits (0 or 1)

(***************************************************************************)
(* A request line's identity.  A request_id may appear on several lines   *)
(* (the contract rejects the later ones with duplicate_request_id, and    *)
(* lines without a valid id answer with request_id null), yet every line  *)
(* gets exactly one terminal event.  Lines are read one at a time, so it  *)
(* is enough to keep, per id, the first line that carried it and the most *)
(* recent later one:                                                       *)
(*   <<i, "first">>  the line that made i used (served, shutdown, or a     *)
(*                   malformed line with a valid id);                      *)
(*   <<i, "later">>  the most recent later line carrying i (rejected);     *)
(*   <<None, "later">> the most recent line without a valid id.            *)
(* A later line's record is replaced when the next such line is read; the *)
(* invariants held for the old record in every state before that.         *)
(***************************************************************************)
First == "first"
Later == "later"
Lines  == (Ids \X {First, Later}) \cup {<<None, Later>>}
NoLine == <<None, None>>   \* lastRead before any line was read

VARIABLES
    phase,    \* State.Phase
    current,  \* State.Current: the request being served, or None
    seq,      \* State.Seq: seq of the last event written for current
    used,     \* State.Used: request_ids seen so far
    \* history
    read,     \* lines read so far
    lastRead, \* the line read most recently
    terms,    \* terms[l]: terminal events written for line l
    frames,   \* frames[l]: events (terminal or not) written for line l
    last,     \* last[l]: seq of the last event written for line l
    aborted,  \* the line in flight when the output failed (no terminal)
    late      \* an event was written in a closed or failed session

history == <<read, lastRead, terms, frames, last, aborted, late>>
\* Flat: tla-checker 0.9.0 does not unfold nested tuples in UNCHANGED.
vars    == <<phase, current, seq, used,
            read, lastRead, terms, frames, last, aborted, late>>

Init ==
    /\ phase = "idle"
    /\ current = None
    /\ seq = 0
    /\ used = {}
    /\ read = {}
    /\ lastRead = NoLine
    /\ terms = [l \in Lines |-> 0]
    /\ frames = [l \in Lines |-> 0]
    /\ last = [l \in Lines |-> 0]
    /\ aborted = {}
    /\ late = FALSE

\* The line a request line with id i is, given the ids used so far.
LineOf(i) == IF i # None /\ i \notin used THEN <<i, First>> ELSE <<i, Later>>

\* The line being served.
InFlight == IF current = None THEN {} ELSE {<<current, First>>}

\* Line l, being served, writes one event with sequence number s.
Write(l, s, terminal) ==
    /\ frames' = [frames EXCEPT ![l] = @ + 1]
    /\ last' = [last EXCEPT ![l] = s]
    /\ terms' = IF terminal THEN [terms EXCEPT ![l] = @ + 1] ELSE terms
    /\ late' = (late \/ phase \in Final)

\* Line l is read and answered at once with its only event: a terminal
\* event (protocol_error, or the shutdown event) with seq 1.  Its record
\* starts afresh (see Lines).
Answer(l) ==
    /\ read' = read \cup {l}
    /\ lastRead' = l
    /\ frames' = [frames EXCEPT ![l] = 1]
    /\ last' = [last EXCEPT ![l] = 1]
    /\ terms' = [terms EXCEPT ![l] = 1]
    /\ late' = (late \/ phase \in Final)

(***************************************************************************)
(* Actions: the triggers of fsm/session, with the same guards.            *)
(***************************************************************************)

\* TrRequest: a well-formed request other than shutdown.  A fresh id starts
\* being served; a used id is rejected (duplicate_request_id, seq 1).
Request(i) ==
    /\ phase = "idle"
    /\ IF i \notin used
         THEN /\ phase' = "busy"
              /\ current' = i
              /\ seq' = 0
              /\ used' = used \cup {i}
              /\ read' = read \cup {<<i, First>>}
              /\ lastRead' = <<i, First>>
              /\ UNCHANGED <<terms, frames, last, aborted, late>>
         ELSE /\ Answer(<<i, Later>>)
              /\ UNCHANGED <<phase, current, seq, used, aborted>>

\* TrShutdown: answered with the shutdown event (seq 1), then exit 0.  A
\* used id is rejected like any request.
Shutdown(i) ==
    /\ phase = "idle"
    /\ IF i \notin used
         THEN /\ phase' = "closed"
              /\ used' = used \cup {i}
              /\ Answer(<<i, First>>)
              /\ UNCHANGED <<current, seq, aborted>>
         ELSE /\ Answer(<<i, Later>>)
              /\ UNCHANGED <<phase, current, seq, used, aborted>>

\* TrMalformed: a line malformed as protocol; i is the request_id it
\* yielded, or None.  Answered with protocol_error (seq 1); a valid id
\* becomes used.
Malformed(i) ==
    /\ phase = "idle"
    /\ Answer(LineOf(i))
    /\ used' = IF i = None THEN used ELSE used \cup {i}
    /\ UNCHANGED <<phase, current, seq, aborted>>

\* TrEvent: the current request writes a non-terminal event.
Event ==
    /\ phase \in Serving
    /\ seq < MaxEvents
    /\ seq' = seq + 1
    /\ Write(<<current, First>>, seq + 1, FALSE)
    /\ UNCHANGED <<phase, current, used, read, lastRead, aborted>>

\* TrTerminal: the current request writes its terminal event and is done;
\* after EOF (draining) the session then closes.
Terminal ==
    /\ phase \in Serving
    /\ Write(<<current, First>>, seq + 1, TRUE)
    /\ phase' = IF phase = "busy" THEN "idle" ELSE "closed"
    /\ current' = None
    /\ seq' = 0
    /\ UNCHANGED <<used, read, lastRead, aborted>>

\* TrEOF: stdin ended.  Idle: exit 0.  Busy: finish the request first.
EOF ==
    /\ phase \in {"idle", "busy"}
    /\ phase' = IF phase = "idle" THEN "closed" ELSE "draining"
    /\ seq' = 0
    /\ UNCHANGED <<current, used>>
    /\ UNCHANGED history

\* TrWriteFailed: stdout failed.  Abort active work, exit 1; the request in
\* flight (if any) can never get its terminal event.
WriteFailed ==
    /\ phase \notin Final
    /\ phase' = "failed"
    /\ current' = None
    /\ seq' = 0
    /\ aborted' = InFlight
    /\ UNCHANGED <<used, read, lastRead, terms, frames, last, late>>

\* The process has exited: nothing happens any more.
Done ==
    /\ phase \in Final
    /\ UNCHANGED vars

Next ==
    \/ \E i \in Ids : Request(i)
    \/ \E i \in Ids : Shutdown(i)
    \/ \E i \in Ids \cup {None} : Malformed(i)
    \/ Event
    \/ Terminal
    \/ EOF
    \/ WriteFailed
    \/ Done

(***************************************************************************)
(* Invariants.  Package spec (Go) has predicates of the same names over   *)
(* event transcripts; NothingAfterClose is NothingAfterShutdown there, the *)
(* shutdown event being the only close a transcript shows.                *)
(***************************************************************************)

TypeOK ==
    /\ phase \in Phases
    /\ current \in Ids \cup {None}
    /\ seq \in 0..MaxEvents
    /\ used \subseteq Ids
    /\ read \subseteq Lines
    /\ lastRead \in Lines \cup {NoLine}
    /\ DOMAIN terms = Lines
    /\ DOMAIN frames = Lines
    /\ DOMAIN last = Lines
    /\ \A l \in Lines :
           terms[l] \in Nat /\ frames[l] \in Nat /\ last[l] \in Nat
    /\ aborted \subseteq Lines
    /\ late \in BOOLEAN

\* Every request line gets exactly one terminal event: at most one while it
\* is served (or when the output failed under it), exactly one once done.
ExactlyOneTerminal ==
    \A l \in read :
        IF l \in InFlight \cup aborted THEN terms[l] <= 1 ELSE terms[l] = 1

\* Each line's events carry seq 1, 2, 3, ... with no gap and no repeat: the
\* seq of its last event equals the number of events it wrote (this holds
\* in every state, so each event's seq was the previous one's plus 1).  The
\* machine's seq is the seq of the served line's last event.
SeqGapless ==
    /\ \A l \in Lines : last[l] = frames[l]
    /\ \A l \in InFlight : seq = last[l]

\* Nothing is written once the session closed (shutdown or EOF) or its
\* output failed.
NothingAfterClose == ~late

\* Requests are served one at a time, in arrival order: the host reads the
\* next line only after the previous one's terminal event, so every line
\* but the last one read is finished (or was aborted by a failed write),
\* and the line in flight, if any, is the last one read.
Serial ==
    /\ \A l \in read \ {lastRead} : terms[l] > 0 \/ l \in aborted
    /\ InFlight \subseteq {lastRead}
    /\ (current # None) = (phase \in Serving)

(***************************************************************************)
(* What fsm/session/graph_test.go compares with the Go machine: only the  *)
(* machine's variables, the history variables projected away.             *)
(***************************************************************************)
GraphView == [phase |-> phase, current |-> current, seq |-> seq, used |-> used]

=============================================================================
