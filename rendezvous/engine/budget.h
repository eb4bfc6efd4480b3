/*
 * budget.h: the restart budget of a job (--max-restarts), decided in one
 * place for every backend: the launcher's local backend (one node's
 * budget) and the rendezvous engine (the whole job's budget).  Only
 * failures spend it: a round started for a membership change (a node
 * joined, a node was lost while enough remain) does not call it.
 */
#ifndef CGRUN_BUDGET_H
#define CGRUN_BUDGET_H

#include <stdint.h>

/*
 * Spend one restart of a budget of max: 1 when fewer than max were spent
 * (*spent is then one more: TORCHELASTIC_RESTART_COUNT of the next
 * round), 0 when the budget is gone (*spent unchanged: the job fails).
 */
int	budget_spend(uint32_t *spent, uint32_t max);

/*
 * Take a count of spent restarts carried from elsewhere (the agents of a
 * job that a restarted daemon forgot): *spent becomes the larger of the
 * two, at most max.  1 when *spent grew, else 0.
 */
int	budget_carry(uint32_t *spent, uint32_t carried, uint32_t max);

#endif /* CGRUN_BUDGET_H */
