//! Changing the applied config: an apply (its base checked, the lockout guard, the confirm
//! window), the config file again on SIGHUP, a confirm, and a rollback (to a named generation an
//! apply of its text; of the pending apply, at once). Each records its generation with who asked.

use std::collections::BTreeSet;

use routerd_engine::{ConfigInput, OperationResult, Phase, ResultDocument};
use routerd_ledger::{Channel, GenerationRecord, GenerationResult, PendingConfirm};

use super::{
    Actor, Applied, ApplyOutcome, ApplyRequest, ChangeRefused, Daemon, RollbackRequest, Trigger,
    instant_of, rfc3339, unix_now,
};
use crate::report::last_apply;

impl Daemon {
    pub(super) fn result_of_phase(&self) -> GenerationResult {
        let degraded = self.status.last_reconcile.as_ref().is_some_and(|r| r.failed > 0)
            || self.status.phase.as_deref() == Some(Phase::Blocked.as_str());
        if degraded { GenerationResult::Degraded } else { GenerationResult::Applied }
    }

    /// Applies `request`: validate (refuse with every error, nothing changed), reconcile,
    /// record the generation (and the pending confirm), write the config file unless a confirm
    /// is awaited.
    pub(super) async fn apply(
        &mut self,
        request: ApplyRequest,
    ) -> Result<ApplyOutcome, ChangeRefused> {
        let current = self.status.generation;
        if let Some(base) = request.base.filter(|base| *base != current) {
            return Err(ChangeRefused::Stale { base, current });
        }
        if let Some((_, p)) = &self.confirm {
            return Err(ChangeRefused::Conflict(format!(
                "generation {} waits for its confirm: confirm or roll back first",
                p.generation
            )));
        }
        let input =
            ConfigInput::parse(&request.yaml, &request.source).map_err(ChangeRefused::Invalid)?;
        let warnings = request
            .client
            .map(|client| crate::lockout::risks(&self.applied.input.config, &input.config, client))
            .unwrap_or_default();
        if !warnings.is_empty() && request.confirm.is_none() {
            return Err(ChangeRefused::Conflict(format!(
                "{}: apply it with a confirm window, so the previous config comes back if you are cut off",
                warnings.join("; ")
            )));
        }
        let previous = self.status.generation;
        let from = request.client.map_or_else(|| "an unknown address".into(), |c| c.to_string());
        tracing::info!(
            "apply by {} ({:?}) from {from}{}: {}",
            request.author,
            request.channel,
            request.confirm.map_or(String::new(), |w| format!(", confirm within {}s", w.as_secs())),
            request.comment
        );
        let next = Applied::new(&self.session, request.yaml.clone(), input);
        let before = std::mem::replace(&mut self.applied, next);
        let Some(doc) = self.reconcile(&BTreeSet::from([Trigger::Apply])).await else {
            // Nothing could run (inventory or ledger failure): keep the previous config.
            self.applied = before;
            let why = self.status.last_error.clone().unwrap_or_default();
            return Err(ChangeRefused::Failed(why));
        };
        let confirm = request.confirm.filter(|_| previous != 0 && doc.generation != previous);
        let pending = confirm.map(|window| PendingConfirm {
            generation: doc.generation,
            previous,
            deadline: unix_now().saturating_add(window.as_secs()),
        });
        let record = GenerationRecord {
            generation: doc.generation,
            yaml: request.yaml,
            digest: self.applied.input.digest.clone(),
            author: request.author,
            channel: request.channel,
            comment: request.comment,
            applied_at: unix_now(),
            result: if pending.is_some() {
                GenerationResult::PendingConfirm
            } else {
                self.result_of_phase()
            },
        };
        self.session
            .ledger()
            .record_generation(&record, pending.as_ref())
            .map_err(|e| ChangeRefused::Failed(e.to_string()))?;
        self.status.last_apply = Some(last_apply(&doc, &record));
        if pending.is_none() {
            self.write_config_file();
        }
        if let Some(fallback) = &mut self.status.config_fallback {
            // Applied, though the file still holds the text that did not load until confirmed.
            fallback.running = Some(doc.generation);
        }
        self.confirm = pending.map(|p| (instant_of(p.deadline), p));
        self.publish(None);
        for w in &warnings {
            tracing::warn!("apply of generation {}: {w}", doc.generation);
        }
        Ok(ApplyOutcome { warnings, ..self.outcome(&doc) })
    }

    /// SIGHUP: applies the config file again if its text changed (an operator edited it on the
    /// console). Invalid text is logged and changes nothing; a pending confirm is kept waiting.
    pub(super) async fn reload(&mut self) {
        let text = match routerd_model::read_source(&self.config_path) {
            Ok(text) => text,
            Err(errors) => {
                tracing::error!("SIGHUP: {errors}");
                return;
            }
        };
        if *text == *self.applied.yaml {
            tracing::info!("SIGHUP: {} unchanged", self.config_path.display());
            return;
        }
        let request = ApplyRequest {
            yaml: text,
            source: self.config_path.display().to_string(),
            author: "routerd".into(),
            channel: Channel::Cli,
            comment: format!("reloaded from {} (SIGHUP)", self.config_path.display()),
            confirm: None,
            client: None,
            base: None,
        };
        match self.apply(request).await {
            Ok(outcome) => tracing::info!(
                "SIGHUP: applied {} as generation {}",
                self.config_path.display(),
                outcome.generation
            ),
            Err(ChangeRefused::Invalid(errors)) => {
                tracing::error!(
                    "SIGHUP: {} is invalid, nothing changed:\n{errors}",
                    self.config_path.display()
                )
            }
            Err(
                ChangeRefused::Conflict(m) | ChangeRefused::NotFound(m) | ChangeRefused::Failed(m),
            ) => {
                tracing::error!("SIGHUP: {m}")
            }
            // A reload names no base.
            Err(ChangeRefused::Stale { .. }) => {}
        }
    }

    /// Confirms the pending apply (asked by `by`): its text becomes the config file.
    pub(super) fn confirm(&mut self, by: &Actor) -> Result<ApplyOutcome, ChangeRefused> {
        let Some((_, pending)) = self.confirm.clone() else {
            return Err(ChangeRefused::Conflict("no apply waits for a confirm".into()));
        };
        let result = self.result_of_phase();
        self.session
            .ledger()
            .settle_generation(pending.generation, result)
            .map_err(|e| ChangeRefused::Failed(e.to_string()))?;
        self.confirm = None;
        self.write_config_file();
        self.publish(None);
        tracing::info!("generation {} confirmed by {by}", pending.generation);
        Ok(ApplyOutcome {
            generation: pending.generation,
            phase: self.status.phase.clone().unwrap_or_default(),
            operations: 0,
            failed: 0,
            confirm_deadline: None,
            warnings: Vec::new(),
        })
    }

    /// A rollback asked for on the control socket or in the web UI: to a named generation with
    /// no apply pending, an apply of its text (with the confirm window asked for); otherwise
    /// [`Self::rollback`] at once.
    pub(super) async fn rollback_request(
        &mut self,
        request: RollbackRequest,
    ) -> Result<ApplyOutcome, ChangeRefused> {
        let RollbackRequest { target, by, confirm, comment } = request;
        let Some(target) = target.filter(|_| self.confirm.is_none()) else {
            let why = format!("rolled back by {by}");
            return self.rollback(target, &by, &why).await;
        };
        let record = match self.session.ledger().generation_record(target) {
            Ok(Some(r)) => r,
            Ok(None) => return Err(ChangeRefused::NotFound(format!("no generation {target}"))),
            Err(e) => return Err(ChangeRefused::Failed(e.to_string())),
        };
        let comment = if comment.is_empty() {
            format!("rollback to generation {target}")
        } else {
            format!("rollback to generation {target}: {comment}")
        };
        self.apply(ApplyRequest {
            yaml: record.yaml,
            source: format!("generation {target}"),
            author: by.user,
            channel: by.channel,
            comment,
            confirm,
            client: by.client,
            base: None,
        })
        .await
    }

    /// Applies an earlier generation's text again: `target`, or the one before the pending
    /// apply. The pending apply, if any, is marked rolled back.
    /// The new generation records `by` as its author and channel (issue 34 §2).
    pub(super) async fn rollback(
        &mut self,
        target: Option<u64>,
        by: &Actor,
        why: &str,
    ) -> Result<ApplyOutcome, ChangeRefused> {
        let pending = self.confirm.as_ref().map(|(_, p)| p.clone());
        let target = match (target, &pending) {
            (Some(t), _) => t,
            (None, Some(p)) => p.previous,
            (None, None) => {
                return Err(ChangeRefused::Conflict(
                    "no apply waits for a confirm: name the generation to roll back to".into(),
                ));
            }
        };
        let record = match self.session.ledger().generation_record(target) {
            Ok(Some(r)) => r,
            Ok(None) => return Err(ChangeRefused::NotFound(format!("no generation {target}"))),
            Err(e) => return Err(ChangeRefused::Failed(e.to_string())),
        };
        let input = ConfigInput::parse(&record.yaml, &format!("generation {target}"))
            .map_err(ChangeRefused::Invalid)?;
        if let Some(p) = &pending {
            self.session
                .ledger()
                .settle_generation(p.generation, GenerationResult::RolledBack)
                .map_err(|e| ChangeRefused::Failed(e.to_string()))?;
            tracing::warn!("generation {}: {why}; applying generation {target}", p.generation);
        } else {
            tracing::warn!("rollback to generation {target}: {why}");
        }
        self.confirm = None;
        self.applied = Applied::new(&self.session, record.yaml.clone(), input);
        let doc = self.reconcile(&BTreeSet::from([Trigger::Apply])).await.ok_or_else(|| {
            ChangeRefused::Failed(self.status.last_error.clone().unwrap_or_default())
        })?;
        let rolled = GenerationRecord {
            generation: doc.generation,
            yaml: record.yaml,
            digest: record.digest,
            author: by.user.clone(),
            channel: by.channel,
            comment: match &pending {
                Some(p) => {
                    format!("rollback to generation {target}: generation {} {why}", p.generation)
                }
                None => format!("rollback to generation {target}"),
            },
            applied_at: unix_now(),
            result: self.result_of_phase(),
        };
        if doc.generation != target
            && let Err(e) = self.session.ledger().record_generation(&rolled, None)
        {
            tracing::error!("recording generation {}: {e}", doc.generation);
        }
        self.status.last_apply = Some(last_apply(&doc, &rolled));
        self.write_config_file();
        self.publish(None);
        Ok(self.outcome(&doc))
    }

    pub(super) fn outcome(&self, doc: &ResultDocument) -> ApplyOutcome {
        ApplyOutcome {
            generation: doc.generation,
            phase: doc.phase.as_str().to_string(),
            operations: doc.operations.len(),
            failed: doc.operations.iter().filter(|o| o.result == OperationResult::Failed).count(),
            confirm_deadline: self.confirm.as_ref().map(|(_, p)| rfc3339(p.deadline)),
            warnings: Vec::new(),
        }
    }
}
