// What `kbqa --help` prints. Plain text in a module of its own: printing it imports nothing else.

export const INDEX_USAGE = `  index status                                the alias, its indices (template version, embedder, documents,
                                              chunks, segments, size), pipelines, and drift from the files
  index migrate [--yes]                       build the current template version × configured embedder beside
                                              the live index, fill it, check counts, swap the alias once;
                                              run again to resume an interrupted one
  index drop-old [--yes]                      delete this alias's indices the alias does not point to
  index rollback [--yes] | index use INDEX [--yes]
                                              point the alias back to the index it was migrated from (or INDEX);
                                              INDEX already live but unfinished: finish its catch-up`;

export const USAGE = `usage: kbqa <command> [options] [--json]
  users create --email E [--org NAME] [--admin]
                                          prints a one-time link to set a password (the invitation)
  users reset-password --email E          prints a one-time link to set a new password (using it
                                          revokes the user's API keys unless its page is told not to)
  users recount-usage --email E           set the user's quota usage from their documents again (a repair)
  users delete --email E                  delete the account: keys revoked, sessions ended, its conversations
                                          removed, its KBs deleted (purged after the retention period)
  keys create --email E [--name N]        prints the key: the only time it is shown
  keys list --email E
  keys revoke --id KEY_ID
  orgs create --name N
  orgs add-member --org N --email E
  kbs share --kb ID (--email E | --org N)     read-only: viewer / org-member, in force at once
  kbs unshare --kb ID (--email E | --org N)
  kbs library --kb ID [--off]
  kbs restore --kb ID                         undo a soft delete
  kbs purge [--older-than 30d]                hard-delete soft-deleted KBs past retention
                                              (default KBQA_DELETED_RETENTION_DAYS)
  doctor [--fix] [--kb ID] [--grace 15m]      find (and with --fix remove, queue again or rebuild) chunks,
                                              contents, jobs and documents that do not match their records
  docs purge-failed [--older-than 7d]         remove failed uploads and their originals past retention
                                              (default KBQA_FAILED_UPLOAD_RETENTION_DAYS; also hourly in the API)
  docs reindex (--kb ID | --all)              rebuild documents' chunks from their stored text, as ingestion
                                              jobs (running API processes share them), with a progress bar
  backup create DIR                           a chunk snapshot, a MongoDB export (records, texts,
                                              files) and a manifest, into DIR (new or empty)
  backup restore DIR                          into an empty stack, its API stopped, then reconciled
                                              (missing chunks rebuilt from the stored originals, orphans
                                              removed); a failure before the reconcile is undone
  feedback export [--kb ID] [--since DATE] [--rating up|down] [--out FILE]
                                              rated answers of conversations as JSONL (question, standalone
                                              query, answer, citations, model, rating, comment; never who)
  eval beir DIR [--url U] [--api-key K] [--kb ID] [--ablate] [--split test] [--limit N] [--out FILE]
  eval beir DIR --sweep 'knob=v1,v2' [--sweep …]  a grid of query-time fusion knobs (fusion, rrf_rank_constant,
                                              weights, bm25_depth, knn_depth, bm25_fields, sentence_weight) over
                                              the ingested KB
  eval answers DIR [--url U] [--api-key K] [--split report|tune|report-2|tune-2|all|conversations] [--limit N]
                   [--dialogues FILE] [--out FILE.json]
                                              the answer benchmark (bench/answers): gold facts, whole
                                              sentences, refusals, citations, latency; the key's user's
                                              password in KBQA_EVAL_PASSWORD (PDFs enter via the web app);
                                              conversations: dialogues through the conversation API
${INDEX_USAGE}`;
