-- A frame with no objects is a real answer: every frame arrives with its
-- labels ([] for none), so completed_frames now counts every frame received,
-- not only frames with a box, and a task whose frames have all arrived is
-- completed (status 2) however many of them are empty. Recount the sessions
-- counted under the old rule; completed_at is kept when set, else the
-- session's last change.
UPDATE upload_session SET
    completed_frames = received,
    status = CASE WHEN received = 0 THEN 0 WHEN received >= total_file_count THEN 2 ELSE 1 END,
    completed_at = CASE WHEN received >= total_file_count THEN coalesce(completed_at, updated_at) END;
