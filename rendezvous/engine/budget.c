/*
 * budget.c: the restart budget (budget.h): may a failure restart the
 * workers?  The one copy of the rule --max-restarts states.
 */
#include "budget.h"

/* Spend one restart if any is left (see budget.h). */
int
budget_spend(uint32_t *spent, uint32_t max)
{
	if (*spent >= max)
		return 0;
	(*spent)++;
	return 1;
}
