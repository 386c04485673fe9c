// The retrieved subgraph of one retrieval for the HTML page (driftgraph/view/graph.py), in one round trip.
// Nodes: everything the Retrieval points at (INCLUDED or DROPPED), plus both endpoints of each relationship
// item (its edge points at the start entity and carries the RELATED id in item_id). A node's status comes
// from its own items (included wins), else from the relationship items it ends. Included nodes first, then
// by best rank and id; only the first $max_nodes are returned with their text (cut at $max_text characters),
// `total` counts them all. Links: the graph relationships among the returned nodes; relationship_items: the
// verdict of every relationship item (to mark the RELATED links that were context candidates).
MATCH (r:Retrieval {id: $id})
CALL (r) {
  MATCH (r)-[e:INCLUDED|DROPPED]->(x)
  WHERE e.source <> 'relationship'
  RETURN x, true AS own, type(e) = 'INCLUDED' AS inc, e.rank AS rank, e.source AS source
  UNION ALL
  MATCH (r)-[e:INCLUDED|DROPPED {source: 'relationship'}]->(a:__Entity__)-[rel:RELATED]->(b:__Entity__)
  WHERE rel.id = e.item_id
  UNWIND [a, b] AS x
  RETURN x, false AS own, type(e) = 'INCLUDED' AS inc, e.rank AS rank, 'relationship' AS source
}
WITH r, x,
     max(CASE WHEN own AND inc THEN 1 ELSE 0 END) AS own_inc,
     max(CASE WHEN own THEN 1 ELSE 0 END) AS own_any,
     max(CASE WHEN inc THEN 1 ELSE 0 END) AS any_inc,
     min(coalesce(rank, 1000000000)) AS best_rank,
     collect(DISTINCT source) AS sources
WITH r, x, sources, best_rank, own_any,
     CASE WHEN own_inc = 1 OR (own_any = 0 AND any_inc = 1) THEN 'included' ELSE 'dropped' END AS status
ORDER BY CASE status WHEN 'included' THEN 0 ELSE 1 END, own_any DESC, best_rank, x.id
WITH r, collect({node: x, status: status, sources: sources, rank: best_rank, own: own_any = 1}) AS ranked
WITH r, size(ranked) AS total, ranked[0..$max_nodes] AS drawn
WITH r, total, drawn, [d IN drawn | d.node] AS nodes
CALL (nodes) {
  UNWIND nodes AS a
  MATCH (a)-[l:RELATED|HAS_ENTITY|IN_COMMUNITY|ABOUT|FOUND_IN|PARENT]->(b)
  WHERE b IN nodes
  RETURN collect({source: a.id, target: b.id, type: type(l), id: l.id}) AS links
}
RETURN total, links,
       COLLECT {
         MATCH (r)-[e:INCLUDED|DROPPED {source: 'relationship'}]->()
         RETURN {id: e.item_id, status: CASE type(e) WHEN 'INCLUDED' THEN 'included' ELSE 'dropped' END}
       } AS relationship_items,
       [d IN drawn | {
         id: d.node.id,
         kind: CASE WHEN d.node:__Entity__ THEN 'entity' WHEN d.node:Chunk THEN 'chunk'
                    WHEN d.node:__Community__ THEN 'report' WHEN d.node:Claim THEN 'claim' ELSE 'other' END,
         label: CASE
           WHEN d.node:Chunk THEN 'chunk ' + coalesce(toString(d.node.human_readable_id), d.node.id)
           WHEN d.node:Claim THEN coalesce(d.node.type, 'claim') + ': ' + coalesce(d.node.subject, '')
           WHEN d.node:__Community__ THEN coalesce(d.node.title, 'community ' + toString(d.node.community))
           ELSE coalesce(d.node.title, d.node.id) END,
         type: d.node.type,
         level: d.node.level,
         community: d.node.community,
         human_readable_id: d.node.human_readable_id,
         text: left(CASE
           WHEN d.node:__Entity__ THEN coalesce(d.node.title, '') + ': ' + coalesce(d.node.description, '')
           WHEN d.node:Chunk THEN coalesce(d.node.text, '')
           WHEN d.node:__Community__ THEN coalesce(d.node.title, '') + '\n' + coalesce(d.node.summary, '')
           WHEN d.node:Claim THEN coalesce(d.node.description, '')
           ELSE '' END, $max_text),
         status: d.status,
         sources: d.sources,
         rank: CASE WHEN d.rank = 1000000000 THEN null ELSE d.rank END,
         own: d.own
       }] AS nodes
