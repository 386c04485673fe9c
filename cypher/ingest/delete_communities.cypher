// Remove every community (with its IN_COMMUNITY and PARENT links), e.g. before re-clustering.
MATCH (c:__Community__)
CALL (c) { DETACH DELETE c } IN TRANSACTIONS OF 5000 ROWS
