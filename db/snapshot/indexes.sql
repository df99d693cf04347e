-- Built after the load, before the swap.
ALTER TABLE companies ADD PRIMARY KEY (root);
ALTER TABLE offices ADD PRIMARY KEY (tax_id);
CREATE INDEX offices_root ON offices (root, tax_id);
ALTER TABLE persons ADD PRIMARY KEY (id);
CREATE INDEX members_root ON members (root, position);
CREATE INDEX members_person ON members (person_id, root, position);
CREATE INDEX members_agent ON members (agent_person_id) WHERE agent_person_id IS NOT NULL;
ALTER TABLE simples ADD PRIMARY KEY (root);
ALTER TABLE simples_periods ADD PRIMARY KEY (root, regime, since);
-- The postal code lookup (GET /zip/:code) reads a CEP's offices through it.
CREATE INDEX offices_zip ON offices (zip);
