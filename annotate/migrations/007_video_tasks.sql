-- Tasks made from a lake video (issue 34 "Label a lake video directly",
-- docs/tracks.md "Label a lake video as a task"): no media is copied and no
-- frame rows are made. The task's frames are the video's frame numbers
-- first_frame, first_frame + every, ... up to last_frame; their shapes are
-- the video's tracks of operation = the project's id.
CREATE TABLE video_task (
    session_seq INTEGER PRIMARY KEY REFERENCES upload_session (seq) ON DELETE CASCADE,
    file_seq    INTEGER NOT NULL REFERENCES file (seq) ON DELETE CASCADE,
    unique_name TEXT    NOT NULL, -- the video's, copied so listings need no file reads
    first_frame INTEGER NOT NULL CHECK (first_frame >= 0),
    last_frame  INTEGER NOT NULL CHECK (last_frame >= first_frame),
    every       INTEGER NOT NULL CHECK (every >= 1)
) STRICT;

CREATE INDEX video_task_file ON video_task (file_seq);

-- A video task's job holds a run of its sampled frames (job_frame holds a
-- lake file per row, so one video's frames cannot live there); review is
-- the reviewer's verdict on the frame.
CREATE TABLE video_job_frame (
    job_seq INTEGER NOT NULL REFERENCES label_job (seq) ON DELETE CASCADE,
    frame   INTEGER NOT NULL CHECK (frame >= 0),
    review  TEXT CHECK (review IN ('accepted', 'rejected')),
    PRIMARY KEY (job_seq, frame)
) STRICT, WITHOUT ROWID;
