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

/* Take the larger count, capped at max (see budget.h). */
int
budget_carry(uint32_t *spent, uint32_t carried, uint32_t max)
{
	if (carried > max)
		carried = max;
	if (carried <= *spent)
		return 0;
	*spent = carried;
	return 1;
}
