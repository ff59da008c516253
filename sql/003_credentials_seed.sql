-- Which pair of GRANTFLOW_* variables a stored credential pair was rotated from (a SHA-256 of that refresh token), so
-- a new set the operator put in the variables wins over the stored rotations of the old one, even when the site kept
-- the client id and secret. NULL for pairs stored before this column existed.
ALTER TABLE {{schema}}_grantflow_credentials ADD COLUMN seeded_from TEXT;
