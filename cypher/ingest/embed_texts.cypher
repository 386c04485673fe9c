// The texts the embedder reads for these nodes (as in pending_*.cypher), to check precomputed vectors against.
MATCH (n)
WHERE n.id IN $ids AND (n:__Entity__ OR n:Chunk OR n:__Community__)
RETURN n.id AS id,
       CASE
         WHEN n:__Entity__ THEN n.title + ':' + coalesce(n.description, '')
         WHEN n:Chunk THEN coalesce(n.text, '')
         ELSE n.full_content
       END AS text
