CREATE TABLE "_sqlite_migrations" (
   "id" INTEGER PRIMARY KEY,
   "migration_set" TEXT,
   "name" TEXT,
   "applied_at" TEXT
);
CREATE UNIQUE INDEX "idx__sqlite_migrations_migration_set_name"
    ON "_sqlite_migrations" ("migration_set", "name");
CREATE TABLE settings (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
CREATE TABLE goldens (
            id TEXT PRIMARY KEY,
            position INTEGER NOT NULL,
            user_input TEXT NOT NULL,
            reference TEXT,
            response TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            content_sha256 TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
CREATE INDEX goldens_position ON goldens(position);
CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            golden_id TEXT NOT NULL REFERENCES goldens(id) ON DELETE CASCADE,
            rank INTEGER NOT NULL CHECK (rank >= 1),
            text TEXT NOT NULL, doc_id TEXT, score REAL,
            UNIQUE (golden_id, rank)
        );
CREATE TABLE judges (
            name TEXT PRIMARY KEY,
            model TEXT,
            base_url TEXT,
            prompt_id TEXT NOT NULL,
            prompt_sha256 TEXT,
            parameters TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL
        , prompt_text TEXT);
CREATE TABLE verdicts (
            id INTEGER PRIMARY KEY,
            judge TEXT NOT NULL REFERENCES judges(name),
            chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            verdict INTEGER CHECK (verdict IN (0, 1)),
            reason TEXT,
            p_relevant REAL CHECK (p_relevant BETWEEN 0 AND 1),
            error TEXT,
            raw_reply TEXT,
            tokens_in INTEGER,
            tokens_out INTEGER,
            latency_ms REAL,
            request_sha256 TEXT,
            created_at TEXT NOT NULL, repetition INTEGER NOT NULL DEFAULT 1 CHECK (repetition >= 1), confidence_note TEXT, requests INTEGER, grade INTEGER, tokens_cached INTEGER, unstable INTEGER CHECK (unstable IN (0, 1)), batch_id TEXT, epoch TEXT,
            CHECK ((verdict IS NULL) <> (error IS NULL))
        );
CREATE INDEX verdicts_judge_chunk ON verdicts(judge, chunk_id);
CREATE INDEX verdicts_request ON verdicts(request_sha256);
CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            annotator TEXT,
            kind TEXT NOT NULL,
            chunk_id INTEGER,
            golden_id TEXT,
            payload TEXT NOT NULL DEFAULT '{}',
            undoes INTEGER REFERENCES events(id)
        );
CREATE INDEX events_annotator ON events(annotator, kind, id);
CREATE UNIQUE INDEX events_undoes ON events(undoes);
CREATE TABLE splits (
            golden_id TEXT PRIMARY KEY REFERENCES goldens(id) ON DELETE CASCADE,
            split TEXT NOT NULL CHECK (split IN ('dev', 'test')),
            seed INTEGER,
            created_at TEXT NOT NULL
        );
CREATE TABLE gold_labels (
            chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
            verdict INTEGER NOT NULL CHECK (verdict IN (0, 1)),
            decided_by TEXT NOT NULL,
            note TEXT,
            decided_at TEXT NOT NULL
        );
CREATE TABLE judge_examples (
            judge TEXT NOT NULL REFERENCES judges(name) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            golden_id TEXT NOT NULL,
            rank INTEGER NOT NULL,
            verdict INTEGER NOT NULL CHECK (verdict IN (0, 1)),
            PRIMARY KEY (judge, position)
        );
CREATE TABLE batches (
            id TEXT PRIMARY KEY,
            judge TEXT NOT NULL REFERENCES judges(name) ON DELETE CASCADE,
            round INTEGER NOT NULL,
            part INTEGER NOT NULL,
            input_file_id TEXT,
            output_file_id TEXT,
            error_file_id TEXT,
            state TEXT NOT NULL,
            requests INTEGER NOT NULL,
            completed INTEGER NOT NULL DEFAULT 0,
            failed INTEGER NOT NULL DEFAULT 0,
            collected INTEGER NOT NULL DEFAULT 0 CHECK (collected IN (0, 1)),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
CREATE TABLE batch_requests (
            custom_id TEXT PRIMARY KEY,
            judge TEXT NOT NULL REFERENCES judges(name) ON DELETE CASCADE,
            round INTEGER NOT NULL,
            part INTEGER NOT NULL,
            task TEXT NOT NULL,
            piece INTEGER NOT NULL,
            pieces INTEGER NOT NULL,
            chunk_ids TEXT NOT NULL,
            ranks TEXT,
            repetition INTEGER NOT NULL,
            request_sha256 TEXT NOT NULL,
            logprobs INTEGER NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'answered', 'stored', 'failed')),
            result TEXT
        );
CREATE INDEX batch_requests_task ON batch_requests(task);
CREATE INDEX batch_requests_part ON batch_requests(judge, round, part);
CREATE TABLE probes (
            id INTEGER PRIMARY KEY,
            golden_id TEXT NOT NULL REFERENCES goldens(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            number INTEGER NOT NULL CHECK (number >= 1),
            text TEXT NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (golden_id, kind, number)
        );
CREATE TABLE probe_calls (
            id INTEGER PRIMARY KEY,
            judge TEXT NOT NULL REFERENCES judges(name) ON DELETE CASCADE,
            probe_id INTEGER NOT NULL REFERENCES probes(id) ON DELETE CASCADE,
            verdict INTEGER CHECK (verdict IN (0, 1)),
            reason TEXT,
            p_relevant REAL CHECK (p_relevant BETWEEN 0 AND 1),
            error TEXT,
            raw_reply TEXT,
            tokens_in INTEGER,
            tokens_out INTEGER,
            latency_ms REAL,
            request_sha256 TEXT NOT NULL,
            created_at TEXT NOT NULL,
            CHECK ((verdict IS NULL) <> (error IS NULL))
        );
CREATE INDEX probe_calls_judge ON probe_calls(judge, probe_id);
CREATE TABLE checks (
            id INTEGER PRIMARY KEY,
            source TEXT NOT NULL,
            golden_id TEXT NOT NULL,
            record TEXT NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (source, golden_id)
        );
CREATE TABLE "labels" (
            id INTEGER PRIMARY KEY,
            annotator TEXT NOT NULL,
            chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            answer TEXT CHECK (answer IN ('noise', 'useful', 'unsure', 'distractor')),
            verdict INTEGER GENERATED ALWAYS AS
              (CASE answer WHEN 'noise' THEN 0 WHEN 'useful' THEN 1 WHEN 'distractor' THEN 0
               END) VIRTUAL,
            unsure INTEGER GENERATED ALWAYS AS (answer IS 'unsure') VIRTUAL,
            distractor INTEGER GENERATED ALWAYS AS (answer IS 'distractor') VIRTUAL,
            blind_verdict INTEGER CHECK (blind_verdict IN (0, 1)),
            shown_verdict INTEGER CHECK (shown_verdict IN (0, 1)),
            judge TEXT,
            action TEXT CHECK (action IN ('accept', 'flip', 'set', 'import')),
            note TEXT,
            decision_ms REAL,
            reason_wrong INTEGER NOT NULL DEFAULT 0 CHECK (reason_wrong IN (0, 1)),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            grade INTEGER CHECK (grade >= 0), guideline INTEGER CHECK (guideline >= 1),
            UNIQUE (annotator, chunk_id)
        );
CREATE INDEX labels_chunk ON labels(chunk_id);
CREATE TABLE "label_conflicts" (
            id INTEGER PRIMARY KEY,
            annotator TEXT NOT NULL,
            chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            answer TEXT CHECK (answer IN ('noise', 'useful', 'unsure', 'distractor')),
            verdict INTEGER GENERATED ALWAYS AS
              (CASE answer WHEN 'noise' THEN 0 WHEN 'useful' THEN 1 WHEN 'distractor' THEN 0
               END) VIRTUAL,
            unsure INTEGER GENERATED ALWAYS AS (answer IS 'unsure') VIRTUAL,
            distractor INTEGER GENERATED ALWAYS AS (answer IS 'distractor') VIRTUAL,
            note TEXT,
            updated_at TEXT NOT NULL
        );
CREATE INDEX label_conflicts_chunk ON label_conflicts(chunk_id);
CREATE TABLE "check_answers" (
            id INTEGER PRIMARY KEY,
            annotator TEXT NOT NULL,
            check_id INTEGER NOT NULL REFERENCES checks(id) ON DELETE CASCADE,
            rank INTEGER NOT NULL CHECK (rank >= 1),
            truth INTEGER CHECK (truth IN (0, 1)),
            answer TEXT CHECK (answer IN ('noise', 'useful', 'unsure', 'distractor')),
            verdict INTEGER GENERATED ALWAYS AS
              (CASE answer WHEN 'noise' THEN 0 WHEN 'useful' THEN 1 WHEN 'distractor' THEN 0
               END) VIRTUAL,
            unsure INTEGER GENERATED ALWAYS AS (answer IS 'unsure') VIRTUAL,
            distractor INTEGER GENERATED ALWAYS AS (answer IS 'distractor') VIRTUAL,
            shown_verdict INTEGER CHECK (shown_verdict IN (0, 1)),
            note TEXT,
            answered_at TEXT NOT NULL,
            UNIQUE (annotator, check_id, rank)
        );
CREATE TABLE align_runs (
            id INTEGER PRIMARY KEY,
            judge TEXT NOT NULL,
            model TEXT NOT NULL,
            optimizer_model TEXT NOT NULL,
            optimizer_url TEXT,
            settings TEXT NOT NULL,
            train TEXT NOT NULL,
            validation TEXT NOT NULL,
            incumbent_kappa REAL,
            best_candidate INTEGER,
            test_chunks INTEGER,
            test_kappa REAL,
            incumbent_test_kappa REAL,
            test_difference REAL,
            test_low REAL,
            test_high REAL,
            outcome TEXT,
            registered_as TEXT,
            prompt_path TEXT,
            calls INTEGER NOT NULL DEFAULT 0,
            tokens_in INTEGER NOT NULL DEFAULT 0,
            tokens_out INTEGER NOT NULL DEFAULT 0,
            cost REAL,
            started_at TEXT NOT NULL,
            finished_at TEXT
        );
CREATE TABLE align_candidates (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES align_runs(id) ON DELETE CASCADE,
            round INTEGER NOT NULL CHECK (round >= 1),
            number INTEGER NOT NULL CHECK (number >= 1),
            request TEXT NOT NULL,
            reply TEXT,
            rationale TEXT,
            prompt TEXT,
            error TEXT,
            validation_kappa REAL,
            validation_agreement REAL,
            validation_chunks INTEGER,
            calls INTEGER NOT NULL DEFAULT 0,
            tokens_in INTEGER NOT NULL DEFAULT 0,
            tokens_out INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            UNIQUE (run_id, round, number)
        );
CREATE TABLE trust_thresholds (
            id INTEGER PRIMARY KEY,
            judge TEXT NOT NULL,
            truth TEXT NOT NULL,
            confidence TEXT NOT NULL CHECK (confidence IN ('logprobs', 'runs')),
            alpha REAL NOT NULL,
            delta REAL NOT NULL,
            threshold REAL,
            dev_chunks INTEGER NOT NULL,
            dev_kept INTEGER NOT NULL,
            test_chunks INTEGER NOT NULL,
            test_kept INTEGER NOT NULL,
            test_agreement REAL,
            test_low REAL,
            test_high REAL,
            created_at TEXT NOT NULL
        );
CREATE TABLE epochs (
            judge TEXT NOT NULL REFERENCES judges(name) ON DELETE CASCADE,
            epoch TEXT NOT NULL,
            model TEXT,
            fingerprint TEXT,
            endpoint TEXT,
            first_at TEXT NOT NULL,
            last_id INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (judge, epoch)
        );
CREATE TABLE canary (
            chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
            position INTEGER NOT NULL
        );
CREATE TABLE rechecks (
            id INTEGER PRIMARY KEY,
            judge TEXT NOT NULL REFERENCES judges(name) ON DELETE CASCADE,
            epoch_before TEXT,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            figures TEXT
        );
CREATE TABLE recheck_calls (
            id INTEGER PRIMARY KEY,
            recheck_id INTEGER NOT NULL REFERENCES rechecks(id) ON DELETE CASCADE,
            chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            verdict INTEGER CHECK (verdict IN (0, 1)),
            reason TEXT,
            p_relevant REAL CHECK (p_relevant BETWEEN 0 AND 1),
            grade INTEGER,
            error TEXT,
            raw_reply TEXT,
            confidence_note TEXT,
            tokens_in INTEGER,
            tokens_out INTEGER,
            tokens_cached INTEGER,
            latency_ms REAL,
            requests INTEGER,
            request_sha256 TEXT,
            epoch TEXT,
            created_at TEXT NOT NULL,
            CHECK ((verdict IS NULL) <> (error IS NULL))
        );
CREATE INDEX recheck_calls_recheck ON recheck_calls(recheck_id, chunk_id);
CREATE TABLE guidelines (
            version INTEGER PRIMARY KEY CHECK (version >= 1),
            text TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            source TEXT,
            set_by TEXT,
            set_at TEXT NOT NULL
        );
CREATE TABLE guideline_reads (
            annotator TEXT PRIMARY KEY,
            version INTEGER NOT NULL,
            read_at TEXT NOT NULL
        );
CREATE TABLE claims (
            golden_id TEXT NOT NULL REFERENCES goldens(id) ON DELETE CASCADE,
            annotator TEXT NOT NULL,
            claimed_at TEXT NOT NULL,
            expires_at TEXT,
            done_at TEXT,
            PRIMARY KEY (golden_id, annotator),
            CHECK ((expires_at IS NULL) <> (done_at IS NULL))
        );
CREATE INDEX claims_annotator ON claims(annotator, done_at);
CREATE INDEX verdicts_repeated ON verdicts(judge, chunk_id) WHERE repetition > 1;
