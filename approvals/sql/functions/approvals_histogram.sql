-- A histogram as an aggregate: approvals_histogram(size, i, n) sums n into bucket i
-- (0-based) of an int[] of size buckets (its state function: approvals_histogram_add).
-- First created by migration 0033.
CREATE OR REPLACE AGGREGATE public.approvals_histogram(integer, integer, integer) (
    SFUNC = approvals_histogram_add,
    STYPE = integer[]
);
