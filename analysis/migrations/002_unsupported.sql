-- auto_annotation runs: the labels of the prompts the model said it cannot
-- look for (its answers' "unsupported"), a JSON list in prompt order.
ALTER TABLE run ADD COLUMN unsupported TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(unsupported));
